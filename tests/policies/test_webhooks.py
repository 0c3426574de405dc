"""Webhooks against a real local HTTP receiver: signed (HMAC-SHA256 over timestamp and body,
replay window), Slack-compatible text, retried after 500s with backoff, deduplicated, never
sent twice after a worker restart; and a signed delivery within seconds of a pick change made
through the one-click patch, through the whole path (patch, matrix update, evaluation, delivery)."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from inventory.live.resync import cluster_resync
from inventory.models import Cluster, Resource
from matrix.services import matrix_rebuild
from patches.services import patch_apply, version_of
from policies.evaluation import policies_evaluate
from policies.models import Delivery, Receiver
from policies.notify import Event, deliveries_create
from policies.services import policies_load_files
from policies.tasks import webhook_deliver_task, webhooks_retry_due_task
from policies.webhooks import DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signature_valid, url_shown
from tests.fakes.kube_api import FakeKubeAPI
from tests.patches.seed import MODEL, SEED_PATCH, documents
from tests.support.access import grant
from tests.support.celery_worker import running_worker
from tests.support.webhook_receiver import Received, WebhookReceiver, running_receiver

KEY = b"s3cret-signing-key"
EVENT = Event("assertion", "c1", ("team-a",), {"type": "assertion.failing", "cluster": "c1",
              "assertion": {"id": "p/a", "severity": "error", "owner": "team-a"},
              "failures": [{"message": "ClusterBaseModel m in team-a: OME picks no runtime"}]})  # fmt: skip
SEED_POLICY = """\
apiVersion: compat.ome.io/v1alpha1
kind: RuntimePolicy
metadata: {name: seed}
spec:
  owner: platform
  assertions:
    - {name: pvc-on-pipeline-runtime, assert: servedBy, runtime: srt-qwen-image-pipeline, scope: {names: [qwen-image-pvc]}}
"""


@pytest.fixture
def receiver_server() -> Iterator[WebhookReceiver]:
    with running_receiver() as server:
        yield server


@pytest.fixture
def secret_dir(tmp_path: Path, settings: Any) -> Path:
    settings.WEBHOOK_SECRET_DIR = tmp_path
    (tmp_path / "hook-key").write_bytes(KEY + b"\n")
    settings.WEBHOOK_RETRY_BASE = 0.05
    return tmp_path


def make_receiver(url: str, **fields: Any) -> Receiver:
    return Receiver.objects.create(name="team-a-hook", url=url, secret_file="hook-key", **fields)


def valid(request: Received, *, window: float = 300) -> bool:
    return signature_valid(
        KEY,
        request.header(TIMESTAMP_HEADER),
        request.body,
        request.header(SIGNATURE_HEADER),
        now=time.time(),
        window=window,
    )


def test_a_delivery_is_signed_and_the_signature_checks_timestamp_and_body(
    db: None, secret_dir: Path, receiver_server: WebhookReceiver
) -> None:
    make_receiver(receiver_server.url)
    (delivery_id,) = deliveries_create([EVENT])

    assert webhook_deliver_task.apply(args=(delivery_id,)).get() == "done"

    (request,) = receiver_server.requests
    assert valid(request)
    assert request.payload["type"] == "assertion.failing"
    assert request.header(DELIVERY_HEADER) == EVENT.id
    assert not signature_valid(KEY, request.header(TIMESTAMP_HEADER), request.body + b" ",
                               request.header(SIGNATURE_HEADER), now=time.time(), window=300)  # fmt: skip
    replayed_later = time.time() + 301
    assert not signature_valid(KEY, request.header(TIMESTAMP_HEADER), request.body,
                               request.header(SIGNATURE_HEADER), now=replayed_later, window=300)  # fmt: skip
    assert Delivery.objects.get(pk=delivery_id).status == Delivery.Status.DELIVERED


def test_a_slack_receiver_gets_text(db: None, secret_dir: Path, receiver_server: WebhookReceiver) -> None:
    make_receiver(receiver_server.url, format=Receiver.Format.SLACK)
    (delivery_id,) = deliveries_create([EVENT])

    webhook_deliver_task.apply(args=(delivery_id,))

    assert receiver_server.requests[0].payload == {
        "text": "[c1] policy p/a (error) is FAILING\nowner: team-a\n• ClusterBaseModel m in team-a: OME picks no runtime"
    }


def test_an_event_is_recorded_once_per_receiver_and_only_for_its_scope(db: None, secret_dir: Path) -> None:
    make_receiver("http://127.0.0.1:9/hook", namespaces="team-*")
    Receiver.objects.create(name="team-b-hook", url="http://127.0.0.1:9/b", namespaces="team-b")

    first, again = deliveries_create([EVENT]), deliveries_create([EVENT])

    assert (len(first), again) == (1, [])


def test_the_url_and_key_never_show(db: None, secret_dir: Path, admin_client: Any) -> None:
    receiver = make_receiver("https://hooks.slack.example/services/T000/B000/tokenpart")

    pages = [
        admin_client.get("/admin/policies/receiver/").content,
        admin_client.get(f"/admin/policies/receiver/{receiver.pk}/change/").content,
    ]

    assert url_shown(receiver.url) == "https://hooks.slack.example/…"
    assert all(b"tokenpart" not in page and KEY not in page for page in pages)


def delivered(delivery_id: int, *, timeout: float = 10.0) -> Delivery:
    """The delivery once the worker has recorded its outcome."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        delivery = Delivery.objects.get(pk=delivery_id)
        if delivery.status not in (Delivery.Status.PENDING, Delivery.Status.SENDING):
            return delivery
        time.sleep(0.02)
    raise AssertionError(f"delivery {delivery_id} still {delivery.status} after {timeout} s")


@pytest.mark.django_db(transaction=True)
def test_deliveries_are_retried_after_500s_and_not_repeated_after_a_worker_restart(
    secret_dir: Path, celery_app: Celery
) -> None:
    with running_receiver(fail_first=2) as server:
        make_receiver(server.url)
        (delivery_id,) = deliveries_create([EVENT])

        with running_worker(celery_app):
            webhook_deliver_task.delay(delivery_id)
            server.wait_for(lambda request: True, timeout=10)
            delivery = delivered(delivery_id)
        with running_worker(celery_app):
            assert webhooks_retry_due_task.apply_async(ignore_result=False).get(timeout=10) == 0

        assert (delivery.status, delivery.attempts, server.answered) == (Delivery.Status.DELIVERED, 3, 3)
        assert len(server.requests) == 1
        assert valid(server.requests[0])


@pytest.fixture
def live_seed(transactional_db: None, tmp_path: Path, settings: Any) -> Iterator[Cluster]:
    settings.MATRIX_UPDATE_ON_CHANGE = False  # the first sync builds the matrix below, queues nothing
    api = FakeKubeAPI().start()
    for obj in documents():
        api.create(copy.deepcopy(obj))
    path = api.write_kubeconfig(tmp_path / "live.kubeconfig")
    cluster = Cluster.objects.create(name="live", source=Cluster.Source.KUBECONFIG, kubeconfig=str(path))
    cluster_resync(cluster)
    matrix_rebuild(cluster)
    yield cluster
    api.stop()


@pytest.mark.integration
def test_a_signed_delivery_follows_a_pick_change_made_by_the_one_click_patch_within_seconds(
    live_seed: Cluster, secret_dir: Path, receiver_server: WebhookReceiver, celery_app: Celery,
    settings: Any, django_user_model: Any, tmp_path: Path,
) -> None:  # fmt: skip
    settings.MATRIX_UPDATE_ON_CHANGE, settings.MATRIX_UPDATE_DELAY = True, 0
    (tmp_path / "seed.yaml").write_text(SEED_POLICY)
    policies_load_files([tmp_path / "seed.yaml"])
    make_receiver(receiver_server.url, on_pick_change=True)
    policies_evaluate(live_seed)  # the evaluation of the last matrix update, before the patch
    user = django_user_model.objects.create_user("ada")
    grant(user, "patcher")
    model = Resource.objects.get(cluster=live_seed, name="qwen-image-pvc")

    with running_worker(celery_app):
        started = time.monotonic()
        outcome = patch_apply(live_seed, model=MODEL, patch=SEED_PATCH, resource_version=version_of(live_seed, model),
                              user=django_user_model.objects.get(pk=user.pk))  # fmt: skip
        pick = receiver_server.wait_for(lambda r: r.payload.get("type") == "pick.changed", timeout=15)
        fixed = receiver_server.wait_for(lambda r: r.payload.get("type") == "assertion.passing", timeout=15)

    assert outcome.result == "applied"
    assert pick.at - started < 5.0
    assert valid(pick)
    assert valid(fixed)
    assert (pick.payload["model"], pick.payload["before"]["runtime"], pick.payload["after"]["runtime"]) == (
        "ClusterBaseModel qwen-image-pvc", "ClusterServingRuntime srt-qwen-image", "ClusterServingRuntime srt-qwen-image-pipeline",
    )  # fmt: skip
    assert [cause["name"] for cause in fixed.payload["causes"]] == ["qwen-image-pvc"]


def test_slack_text_from_clusters_is_inert(db: None, secret_dir: Path, receiver_server: WebhookReceiver) -> None:
    make_receiver(receiver_server.url, format=Receiver.Format.SLACK)
    hostile = Event(
        "assertion", "c1", ("team-a",), {**EVENT.payload, "failures": [{"message": "<!channel> <https://x|y> & co"}]}
    )
    (delivery_id,) = deliveries_create([hostile])

    webhook_deliver_task.apply(args=(delivery_id,))

    assert receiver_server.requests[0].payload["text"].endswith("• &lt;!channel&gt; &lt;https://x|y&gt; &amp; co")
