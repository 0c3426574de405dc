"""The inventory's Celery tasks, with a real Redis and (for the end-to-end ones) a real worker."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from celery import Celery
from celery.worker import WorkController
from django.utils import timezone

from inventory import tasks
from inventory.live.leases import watch_lease_claim, watch_lease_release
from inventory.models import Cluster, Kind, Resource, SyncState
from inventory.signals import inventory_changed
from tests.inventory.live.objects import model, one_of_each
from tests.support.celery_worker import running_worker
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.integration


@pytest.fixture
def queues(redis_server: RedisServer, celery_app: Celery) -> Iterator[Any]:
    """The broker's queues (Redis lists), emptied before and after the test."""
    client = redis_server.client()
    client.delete("celery", "watch")
    yield client
    client.delete("celery", "watch")


def queued_tasks(client: Any, queue: str) -> list[tuple[str, list[Any], dict[str, Any]]]:
    """(task name, args, kwargs) of each message waiting in a queue (kombu's Redis format)."""
    queued = []
    for raw in client.lrange(queue, 0, -1):
        message = json.loads(raw)
        args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
        queued.append((message["headers"]["task"], args, kwargs))
    return queued


@pytest.mark.django_db
def test_ensure_watches_queues_one_watch_task_per_whole_idle_cluster_on_the_watch_queue(fake, cluster, queues) -> None:
    Cluster.objects.create(name="snap", source=Cluster.Source.MANIFESTS, manifests=["demo"])
    assert watch_lease_claim(cluster, Kind.INFERENCE_SERVICE, owner="someone")

    assert tasks.ensure_watches() == 0  # one kind is held: the cluster is claimed whole or not at all
    watch_lease_release(cluster, Kind.INFERENCE_SERVICE, owner="someone")
    assert tasks.ensure_watches() == 5
    assert tasks.ensure_watches() == 0  # the leases are held now

    owners = dict(SyncState.objects.filter(cluster=cluster).values_list("kind", "watch_owner"))
    assert queued_tasks(queues, "watch") == [("inventory.tasks.watch_cluster", [cluster.pk, owners], {})]
    assert len(set(owners.values())) == 5
    assert queues.llen("celery") == 0


@pytest.mark.django_db
def test_ensure_watches_stops_adding_watches_while_nobody_consumes_the_queue(fake, cluster, queues) -> None:
    def leases_expire() -> None:
        SyncState.objects.update(watch_lease_until=timezone.now() - timedelta(seconds=1))

    assert tasks.ensure_watches() == 5
    leases_expire()  # a whole lease later, the cluster's watch task still waits: nobody reads the queue

    assert tasks.ensure_watches() == 0

    assert queues.llen("watch") == 1
    assert set(SyncState.objects.values_list("watch_owner", flat=True)) == {""}  # claims given back


@pytest.mark.django_db
def test_resync_all_queues_a_resync_per_live_cluster_only(fake, cluster, queues) -> None:
    Cluster.objects.create(name="snap", source=Cluster.Source.MANIFESTS, manifests=["demo"])

    assert tasks.resync_all() == 1

    queued = queued_tasks(queues, "celery")
    assert [args[0] for _, args, _ in queued] == [cluster.pk]
    assert {name for name, _, _ in queued} == {"inventory.tasks.resync_cluster"}


@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_the_resync_task_end_to_end(fake, cluster, celery_worker: WorkController) -> None:
    for obj in one_of_each():
        fake.create(obj)
    fake.remove_kind("inferenceservices")

    outcome = tasks.resync_cluster.apply_async((cluster.pk,), ignore_result=False).get(timeout=20)

    assert outcome["cluster"] == "live"
    assert outcome["errors"] == {"InferenceService": "OME CRD inferenceservices not installed (404)"}
    assert outcome["counts"]["BaseModel"]["added"] == 2
    assert Resource.objects.filter(cluster=cluster).count() == len(one_of_each()) - 1
    states = dict(SyncState.objects.filter(cluster=cluster).values_list("kind", "last_error"))
    assert states.pop("InferenceService") == "OME CRD inferenceservices not installed (404)"
    assert set(states.values()) == {""}


@pytest.mark.django_db(transaction=True)
def test_a_worker_on_the_watch_queue_holds_the_watch_and_applies_live_changes(
    fake, cluster, celery_app: Celery, settings
) -> None:
    settings.OME_WATCH_DB_THREADS = 1  # SQLite's shared in-memory test database: one writer
    fake.create(model("before"))
    applied = threading.Event()

    def on_change(sender: object, changes: list[Any], **kwargs: Any) -> None:
        if any(change.name == "during" for change in changes):
            applied.set()

    inventory_changed.connect(on_change)
    try:
        with running_worker(celery_app, queues=["celery", "watch"]):
            handed = tasks.watch_cluster.apply_async((cluster.pk,), ignore_result=False).get(timeout=15)
            assert fake.wait_for_watch("clusterbasemodels", timeout=15)  # the task has returned
            fake.create(model("during"))
            assert applied.wait(15)
            again = tasks.watch_cluster.apply_async((cluster.pk,), ignore_result=False).get(timeout=15)
    finally:
        tasks._stop_watches()  # what a warm shutdown of the worker does
        inventory_changed.disconnect(on_change)

    assert sorted(handed["held"]) == sorted(Kind.values)
    assert again == {"held": []}  # every lease is taken
    assert fake.active_watches() == 0
    assert sorted(Resource.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["before", "during"]
    state = SyncState.objects.get(cluster=cluster, kind=Kind.CLUSTER_BASE_MODEL)
    assert (state.watch_owner, state.watch_connected, state.resource_version) == ("", False, fake.resource_version)
