"""/healthz, /readyz and /metrics: what they check, what they report, and that kubelet and
Prometheus reach them over plain HTTP by the pod's IP."""

from __future__ import annotations

import copy
import json
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.db import OperationalError
from django.test import Client
from django.utils import timezone

from inventory.models import Cluster, Kind, Resource, SyncState
from inventory.sync import event_apply
from matrix.selectors import current_build
from matrix.services import matrix_apply_changes, matrix_build_start
from ome_dashboard.ops import metrics, probes
from patches.models import PatchAttempt
from tests.patches.seed import PIPELINE
from tests.support.matrix import matrix_cells
from tests.support.surfaces import metrics_of

POD_IP_HOST = "10.42.0.17:8000"


@pytest.fixture(autouse=True)
def _local_copy(settings: Any) -> None:
    # As `make run` serves it: DEBUG on, so /metrics answers without METRICS_TOKEN (with DEBUG
    # off it needs one: tests/security/test_hardening.py).
    settings.DEBUG = True


def live_cluster(name: str) -> Cluster:
    return Cluster.objects.create(
        name=name, source=Cluster.Source.KUBECONFIG, kubeconfig=f"/etc/ome/kubeconfigs/{name}"
    )


def listed(cluster: Cluster, *, ago: timedelta, kinds: list[str] | None = None, error: str = "") -> None:
    for kind in kinds or Kind.values:
        SyncState.objects.update_or_create(
            cluster=cluster, kind=kind, defaults={"last_list_at": timezone.now() - ago, "last_error": error}
        )


def test_healthz_answers_without_touching_the_database(client: Client) -> None:
    # No database access is allowed in this test: pytest-django would fail any query.
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/metrics"])
def test_probes_answer_the_pods_ip_over_plain_http_where_pages_are_refused(
    client: Client, settings: Any, path: str
) -> None:
    settings.ALLOWED_HOSTS = ["ome.example"]
    settings.SECURE_SSL_REDIRECT = True

    probe = client.get(path, headers={"host": POD_IP_HOST})
    page = client.get("/", headers={"host": POD_IP_HOST})
    plain_page = client.get("/", headers={"host": "ome.example"})

    assert probe.status_code == 200
    assert page.status_code == 400
    assert plain_page.status_code == 301
    assert plain_page["Location"].startswith("https://ome.example/")


@pytest.mark.django_db
def test_the_probes_also_resolve_as_urls() -> None:
    from django.urls import resolve, reverse

    assert reverse("readyz") == "/readyz"
    assert reverse("metrics") == "/metrics"
    assert resolve("/readyz").func is probes.readyz


PROBE_TOKEN = "probe-token"


@pytest.mark.django_db
def test_anonymous_readyz_says_ok_or_not_ok_and_nothing_else(client: Client, settings: Any) -> None:
    settings.DEBUG, settings.METRICS_TOKEN = False, PROBE_TOKEN
    listed(live_cluster("stale"), ago=timedelta(days=1), kinds=[Kind.SERVING_RUNTIME], error="boom")

    tolerated = client.get("/readyz")
    wrong_token = client.get("/readyz", headers={"Authorization": "Bearer nope"})
    settings.OME_READY_REQUIRE = ["database", "sync"]
    required = client.get("/readyz")

    assert (tolerated.status_code, tolerated.json()) == (200, {"status": "ok"})
    assert (wrong_token.status_code, wrong_token.json()) == (200, {"status": "ok"})
    assert (required.status_code, required.json()) == (503, {"status": "fail"})


@pytest.mark.django_db
def test_readyz_details_need_the_metrics_token_or_a_signed_in_superuser(
    client: Client, settings: Any, django_user_model: Any
) -> None:
    settings.DEBUG, settings.METRICS_TOKEN = False, PROBE_TOKEN
    listed(live_cluster("stale"), ago=timedelta(days=1), kinds=[Kind.SERVING_RUNTIME], error="boom")

    client.force_login(django_user_model.objects.create_user("viewer"))
    user = client.get("/readyz").json()
    client.force_login(django_user_model.objects.create_superuser("root"))
    superuser = client.get("/readyz").json()
    token = Client().get("/readyz", headers={"Authorization": f"Bearer {PROBE_TOKEN}"}).json()

    assert user == {"status": "ok"}
    assert superuser["checks"]["sync"]["stale"] == ["stale"]
    assert token["checks"]["sync"]["stale"] == ["stale"]


@pytest.mark.django_db
def test_readyz_reports_database_broker_and_sync_each_with_its_status(client: Client, seed: Cluster) -> None:
    response = client.get("/readyz")

    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "broker", "sync", "freshness"}
    assert body["checks"]["freshness"]["status"] == "ok"
    assert body["checks"]["freshness"]["required"] is True
    assert body["checks"]["database"]["status"] == "ok"
    assert body["checks"]["database"]["required"] is True
    assert body["checks"]["broker"]["status"] == "ok"
    # A manifest snapshot is reloaded on request only: its age is not judged.
    assert body["checks"]["sync"] == {
        "status": "ok",
        "threshold_seconds": 900,
        "clusters": {},
        "ms": body["checks"]["sync"]["ms"],
        "required": False,
    }


@pytest.mark.django_db
def test_readyz_names_live_clusters_whose_last_sync_is_older_than_the_threshold(client: Client, settings: Any) -> None:
    settings.OME_READY_SYNC_MAX_AGE = 600
    listed(live_cluster("fresh"), ago=timedelta(seconds=30))
    listed(live_cluster("stale"), ago=timedelta(seconds=30))
    listed(Cluster.objects.get(name="stale"), ago=timedelta(hours=2), kinds=[Kind.SERVING_RUNTIME], error="boom")
    listed(live_cluster("never"), ago=timedelta(seconds=30), kinds=[Kind.BASE_MODEL])

    body = client.get("/readyz").json()

    sync = body["checks"]["sync"]
    assert body["status"] == "degraded"
    assert sync["status"] == "fail"
    assert sync["threshold_seconds"] == 600
    assert sync["stale"] == ["never", "stale"]
    assert sync["clusters"]["fresh"]["status"] == "ok"
    assert 25 < sync["clusters"]["fresh"]["age_seconds"] < 120
    assert sync["clusters"]["stale"]["status"] == "stale"
    assert sync["clusters"]["stale"]["age_seconds"] > 7000
    assert sync["clusters"]["stale"]["failing_kinds"] == [Kind.SERVING_RUNTIME]
    assert sync["clusters"]["never"] == {"age_seconds": None, "failing_kinds": [], "status": "never"}


@pytest.mark.django_db
def test_a_failing_check_answers_503_only_when_it_is_required(client: Client, settings: Any) -> None:
    listed(live_cluster("stale"), ago=timedelta(days=1))

    settings.OME_READY_REQUIRE = ["database"]
    tolerated = client.get("/readyz")
    settings.OME_READY_REQUIRE = ["database", "sync"]
    required = client.get("/readyz")

    assert (tolerated.status_code, tolerated.json()["status"]) == (200, "degraded")
    assert (required.status_code, required.json()["status"]) == (503, "fail")


class _BrokenConnection:
    def cursor(self) -> Any:
        raise OperationalError('connection to server at "db.internal" (10.0.0.9), port 5432 failed')


@pytest.mark.django_db
def test_readyz_is_503_without_the_database_and_does_not_show_the_drivers_message(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probes, "connection", _BrokenConnection())

    response = client.get("/readyz")

    assert response.status_code == 503
    assert response.json()["checks"]["database"]["status"] == "fail"
    assert response.json()["checks"]["database"]["error"] == "OperationalError"
    assert b"db.internal" not in response.content


@pytest.mark.django_db
def test_metrics_report_sync_lag_watch_reconnects_matrix_and_patch_results(client: Client, seed: Cluster) -> None:
    live = live_cluster("live")
    listed(live, ago=timedelta(seconds=90))
    SyncState.objects.filter(cluster=live, kind=Kind.BASE_MODEL).update(
        watch_reconnects=7,
        watch_connected=True,
        watch_lease_until=timezone.now() + timedelta(seconds=60),
        last_error="API server unreachable",
    )
    # A holder that said "connected" but let its lease run out (it died) reads as not connected.
    SyncState.objects.filter(cluster=live, kind=Kind.SERVING_RUNTIME).update(
        watch_connected=True, watch_lease_until=timezone.now() - timedelta(seconds=1)
    )
    SyncState.objects.filter(cluster=live, kind=Kind.INFERENCE_SERVICE).update(last_list_at=None)
    for result in ("applied", "applied", "conflict"):
        PatchAttempt.objects.create(cluster_name="seed", model_kind="ClusterBaseModel", model_name="m", result=result)

    samples = metrics_of(client)

    def value(name: str, **labels: str) -> float:
        return samples[name][tuple(sorted(labels.items()))]

    assert value("ome_metrics_database_up") == 1
    assert 89 < value("ome_sync_lag_seconds", cluster="live", kind="ClusterBaseModel") < 200
    assert value("ome_sync_lag_seconds", cluster="live", kind="InferenceService") == float("inf")
    assert value("ome_watch_reconnects_total", cluster="live", kind="BaseModel") == 7
    assert value("ome_watch_connected", cluster="live", kind="BaseModel") == 1
    assert value("ome_watch_connected", cluster="live", kind="ServingRuntime") == 0
    assert value("ome_sync_error", cluster="live", kind="BaseModel") == 1
    assert value("ome_sync_error", cluster="live", kind="ServingRuntime") == 0
    assert value("ome_cluster_info", cluster="live", source="kubeconfig") == 1
    assert value("ome_patch_attempts_total", cluster="seed", result="applied") == 2
    assert value("ome_patch_attempts_total", cluster="seed", result="conflict") == 1
    build = current_build(seed)
    assert build is not None
    assert value("ome_matrix_build_duration_seconds", cluster="seed") == build.duration_ms / 1000
    assert value("ome_matrix_builds_running", cluster="seed") == 0
    assert sum(v for k, v in samples["ome_matrix_rows"].items() if ("cluster", "seed") in k) == build.rows_count
    expected_cells = Counter(cell.status for cell in matrix_cells(build))
    cells = cell_counts(samples, "seed")
    assert cells == {status: expected_cells.get(status, 0) for status in cells}
    assert sum(cells.values()) == sum(expected_cells.values()) > 0


@pytest.mark.django_db
def test_metrics_count_a_build_that_was_started_and_never_finished(client: Client, seed: Cluster) -> None:
    matrix_build_start(seed)

    samples = metrics_of(client)

    assert samples["ome_matrix_builds_running"][(("cluster", "seed"),)] == 1


def cell_counts(samples: dict[str, dict[tuple[tuple[str, str], ...], float]], cluster: str) -> dict[str, float]:
    return {dict(k)["status"]: v for k, v in samples["ome_matrix_cells"].items() if ("cluster", cluster) in k}


@pytest.mark.django_db
def test_metrics_follow_an_incremental_update_of_the_matrix(client: Client, seed: Cluster) -> None:
    before = cell_counts(metrics_of(client), "seed")
    model = Resource.objects.get(cluster=seed, kind=Kind.CLUSTER_BASE_MODEL, name="qwen-image-pvc")
    obj = copy.deepcopy(model.obj)
    obj["spec"]["diffusionPipeline"] = PIPELINE
    change = event_apply(seed, "MODIFIED", obj)
    assert change is not None
    matrix_apply_changes(seed, [change.to_dict()])
    build = current_build(seed)
    assert build is not None

    after = cell_counts(metrics_of(client), "seed")

    expected = Counter(cell.status for cell in matrix_cells(build))
    assert after == {status: expected.get(status, 0) for status in after}
    assert after != before


@pytest.mark.django_db
def test_metrics_need_the_bearer_token_when_one_is_set(client: Client, settings: Any) -> None:
    settings.METRICS_TOKEN = "scrape-me"

    anonymous = client.get("/metrics")
    wrong = client.get("/metrics", headers={"authorization": "Bearer nope"})
    right = client.get("/metrics", headers={"authorization": "Bearer scrape-me"})

    assert anonymous.status_code == wrong.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    assert right.status_code == 200


@pytest.mark.django_db
def test_metrics_say_when_the_database_does_not_answer(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: Any) -> Any:
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(metrics.DatabaseCollector, "_families", broken)

    samples = metrics_of(client)

    assert samples == {"ome_metrics_database_up": {(): 0.0}}


@pytest.mark.django_db
def test_readyz_body_is_json_with_a_status_per_check(client: Client) -> None:
    body = json.loads(client.get("/readyz").content)

    assert body["status"] in {"ok", "degraded", "fail"}
    assert all(check["status"] in {"ok", "fail", "skipped"} for check in body["checks"].values())
    assert all(isinstance(check["ms"], float) for check in body["checks"].values())
