"""Faults that must neither lose data nor wedge the system (docs/operations.md, "Faults"):
Redis down, a worker killed in the middle of a matrix build, the cluster's API server down or
slow, the database locked or restarted. (A patch sent twice: tests/patches/test_services.py,
test_a_patch_sent_twice_is_reported_already_applied_without_sending_anything.)"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from django.conf import settings
from django.core.signals import request_finished, request_started
from django.db import OperationalError, connections, transaction
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from inventory import kube
from inventory.live.resync import cluster_resync
from inventory.models import Cluster, Kind, Resource, SyncState
from matrix.models import MatrixBuild, MatrixRow
from matrix.selectors import current_build
from matrix.services import matrix_build_chunk, matrix_build_start, matrix_rebuild
from ome_dashboard.celery import debug_ping
from patches.services import version_of
from tests.fakes.kube_api import FakeKubeAPI
from tests.ops import pg
from tests.ops.conftest import StoppableRedis
from tests.patches.seed import MODEL, PIPELINE, SEED_PATCH, documents
from tests.support.access import grant
from tests.support.celery_worker import running_worker
from tests.support.surfaces import every_surface


def readyz_details(client: Client, settings: Any) -> Any:
    """/readyz with its checks, as the METRICS_TOKEN bearer sees it."""
    settings.METRICS_TOKEN = "probe-token"
    return client.get("/readyz", headers={"Authorization": "Bearer probe-token"})


# ---- Redis down ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_matrix_pages_and_api_are_served_while_redis_is_down(
    own_redis: StoppableRedis, seed: Cluster, client: Client, settings: Any
) -> None:
    build = current_build(seed)
    own_redis.stop()

    cells = client.get("/api/v1/matrix/cells/", {"cluster": "seed"})
    page = client.get("/matrix/", {"cluster": "seed"})
    ready = readyz_details(client, settings)
    said = every_surface(client)

    assert cells.status_code == 200
    assert build is not None
    assert cells["X-OME-Build"] == str(build.pk)
    assert cells.json()["count"] > 0
    assert page.status_code == 200
    assert b"qwen-image-pvc" in page.content
    assert ready.status_code == 200
    assert ready.json()["status"] == "degraded"
    assert ready.json()["checks"]["broker"]["status"] == "fail"
    assert said["state"] == "live"  # nothing changed: the matrix still holds every inventory change


def test_an_inventory_change_while_redis_is_down_answers_the_request_and_keeps_the_change(
    own_redis: StoppableRedis, seed_committed: Cluster, settings: Any, django_user_model: Any
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = True
    user = django_user_model.objects.create_user("ada")
    grant(user, "patcher")
    api = APIClient(raise_request_exception=False)
    api.force_authenticate(django_user_model.objects.get(pk=user.pk))
    model = Resource.objects.get(cluster=seed_committed, name="qwen-image-pvc")
    body = {
        "cluster": "seed",
        "model": MODEL,
        "patch": SEED_PATCH,
        "resource_version": version_of(seed_committed, model),
    }
    own_redis.stop()

    started = time.monotonic()
    response = api.post(reverse("api:patch-apply"), body, format="json")
    took = time.monotonic() - started

    model.refresh_from_db()
    said = every_surface(Client())
    assert model.obj["spec"]["diffusionPipeline"] == PIPELINE
    assert took < 5
    assert response.status_code == 200, response.content
    # Its matrix update could not be queued: every surface says the matrix lags behind it.
    assert (said["state"], said["api"]["versions_behind"]) == ("lagging", 1)
    assert said["ready_status"] == 200


def test_a_worker_picks_work_up_again_when_redis_comes_back(own_redis: StoppableRedis, celery_app: Celery) -> None:
    with running_worker(celery_app):
        assert debug_ping.delay().get(timeout=10) == "pong"
        own_redis.stop()
        with pytest.raises(Exception, match=r"(?i)connect|retry"):
            debug_ping.delay()
        own_redis.start()

        assert debug_ping.delay().get(timeout=30) == "pong"


# ---- a worker killed in the middle of a matrix build ---------------------------------------------


@pytest.mark.django_db
def test_a_build_abandoned_midway_leaves_the_previous_matrix_visible_and_the_next_one_completes(
    seed: Cluster, client: Client
) -> None:
    previous = current_build(seed)
    assert previous is not None
    rows_before = sorted(MatrixRow.objects.filter(build=previous).values_list("model_id", "namespace", "outcome"))
    abandoned, chunks = matrix_build_start(seed, chunk_size=1)
    matrix_build_chunk(abandoned.pk, chunks[0])
    # The worker dies here: no more chunks, no finish, no failure recorded.

    during = client.get("/api/v1/matrix/cells/", {"cluster": "seed"})
    assert current_build(seed) == previous
    assert during["X-OME-Build"] == str(previous.pk)
    assert every_surface(client)["state"] == "live"  # the previous matrix holds every inventory change

    after = matrix_rebuild(seed)

    assert current_build(seed) == after
    assert after.status == MatrixBuild.Status.SUCCEEDED
    assert sorted(MatrixRow.objects.filter(build=after).values_list("model_id", "namespace", "outcome")) == rows_before
    assert client.get("/api/v1/matrix/cells/", {"cluster": "seed"})["X-OME-Build"] == str(after.pk)
    assert not MatrixBuild.objects.filter(pk=previous.pk).exists()


# ---- the cluster's API server down or slow --------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeKubeAPI]:
    api = FakeKubeAPI().start()
    for obj in documents():
        api.create(obj)
    yield api
    api.stop()


@pytest.fixture
def live(db: None, fake: FakeKubeAPI, tmp_path: Path, settings: Any) -> Cluster:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    path = fake.write_kubeconfig(tmp_path / "live.kubeconfig")
    cluster = Cluster.objects.create(name="live", source=Cluster.Source.KUBECONFIG, kubeconfig=str(path))
    assert cluster_resync(cluster).errors == {}
    return cluster


def stored(cluster: Cluster) -> list[tuple[str, str, str, str]]:
    return sorted(Resource.objects.filter(cluster=cluster).values_list("kind", "namespace", "name", "resource_version"))


def test_an_api_server_that_is_down_is_recorded_per_kind_and_nothing_is_removed(
    live: Cluster, fake: FakeKubeAPI, client: Client, settings: Any
) -> None:
    before = stored(live)
    fake.stop()

    result = cluster_resync(live)

    assert set(result.errors) == set(Kind.values)
    assert result.transient_error() is not None
    assert stored(live) == before
    states = SyncState.objects.filter(cluster=live)
    assert all("unreachable" in state.last_error for state in states)
    assert readyz_details(client, settings).json()["checks"]["sync"]["clusters"]["live"]["failing_kinds"] == sorted(
        Kind.values
    )


def test_an_api_server_slower_than_the_read_timeout_is_recorded_and_nothing_is_removed(
    live: Cluster, fake: FakeKubeAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = stored(live)
    monkeypatch.setattr(kube, "READ_TIMEOUT", 0.5)
    fake.delay(5, verbs="list")

    started = time.monotonic()
    result = cluster_resync(live, kinds=[Kind.CLUSTER_BASE_MODEL])
    took = time.monotonic() - started
    fake.delay(0)

    assert took < 4
    assert isinstance(result.errors[Kind.CLUSTER_BASE_MODEL], kube.KubeUnavailable)
    assert stored(live) == before
    assert SyncState.objects.get(cluster=live, kind=Kind.CLUSTER_BASE_MODEL).last_error


def test_after_the_api_server_recovers_the_next_resync_clears_the_error(live: Cluster, fake: FakeKubeAPI) -> None:
    fake.fail_next(len(Kind.values), status=503)
    assert cluster_resync(live).errors

    assert cluster_resync(live).errors == {}
    assert not SyncState.objects.filter(cluster=live).exclude(last_error="").exists()


# ---- the database locked or restarted --------------------------------------------------------------


@contextmanager
def extra_database(settings_dict: dict[str, Any], blocker: Any) -> Iterator[str]:
    """A database alias for this test only (each thread gets its own connection to it)."""
    alias = f"ops_{uuid.uuid4().hex[:8]}"
    configured = connections.configure_settings(
        {"default": dict(connections.settings["default"]), alias: settings_dict}
    )
    connections.settings[alias] = configured[alias]
    try:
        with blocker.unblock():
            yield alias
    finally:
        connections[alias].close()
        del connections.settings[alias]


def sqlite_settings(path: Path, **options: Any) -> dict[str, Any]:
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(path),
        "OPTIONS": {**settings.SQLITE_OPTIONS, **options},
    }


def insert_while_another_writer_holds_the_lock(alias: str, *, hold: float) -> float:
    """Thread A writes and keeps its transaction open for `hold` seconds; meanwhile this thread
    writes too. Returns how long this thread's write waited."""
    locked, failures = threading.Event(), []

    def first_writer() -> None:
        try:
            with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
                cursor.execute("INSERT INTO item (writer) VALUES ('first')")
                locked.set()
                time.sleep(hold)  # holding the write lock is the point
        except Exception as error:  # reported by the main thread
            failures.append(error)
        finally:
            connections[alias].close()

    thread = threading.Thread(target=first_writer)
    thread.start()
    try:
        assert locked.wait(5)
        started = time.monotonic()
        with transaction.atomic(using=alias), connections[alias].cursor() as cursor:
            cursor.execute("INSERT INTO item (writer) VALUES ('second')")
        return time.monotonic() - started
    finally:
        thread.join()
        assert not failures, failures


def test_a_concurrent_sqlite_writer_waits_for_the_lock_instead_of_failing(
    tmp_path: Path, django_db_blocker: Any
) -> None:
    with extra_database(sqlite_settings(tmp_path / "locked.sqlite3"), django_db_blocker) as alias:
        with connections[alias].cursor() as cursor:
            cursor.execute("CREATE TABLE item (writer TEXT)")

        waited = insert_while_another_writer_holds_the_lock(alias, hold=0.5)

        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT writer FROM item ORDER BY rowid")
            writers = [row[0] for row in cursor.fetchall()]
    assert settings.SQLITE_OPTIONS["timeout"] >= 5
    assert waited >= 0.3
    assert writers == ["first", "second"]


def test_without_the_busy_timeout_the_same_writer_would_fail(tmp_path: Path, django_db_blocker: Any) -> None:
    with extra_database(sqlite_settings(tmp_path / "locked.sqlite3", timeout=0), django_db_blocker) as alias:
        with connections[alias].cursor() as cursor:
            cursor.execute("CREATE TABLE item (writer TEXT)")

        with pytest.raises(OperationalError, match="locked"):
            insert_while_another_writer_holds_the_lock(alias, hold=0.5)


@pytest.fixture(scope="module")
def postgres() -> Iterator[pg.PostgresCluster]:
    assert pg.bin_dir() is not None, (
        "PostgreSQL's binaries are not installed: apt-get install postgresql (.ci/test-deps)"
    )
    with pg.running_postgres() as server:
        yield server


def postgres_settings(server: pg.PostgresCluster, *, health_checks: bool) -> dict[str, Any]:
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "postgres",
        "USER": "postgres",
        "HOST": "127.0.0.1",
        "PORT": server.port,
        "CONN_MAX_AGE": 600,
        "CONN_HEALTH_CHECKS": health_checks,
    }


def one_request(alias: str) -> int:
    """What a request does with a persistent connection: Django's request signals around a query."""
    request_started.send(sender=None)
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute("SELECT 1")
            return int(cursor.fetchone()[0])
    finally:
        request_finished.send(sender=None)


def test_after_postgresql_restarts_the_next_request_reconnects(
    postgres: pg.PostgresCluster, django_db_blocker: Any
) -> None:
    health_checks = settings.DATABASES["default"]["CONN_HEALTH_CHECKS"]
    with extra_database(postgres_settings(postgres, health_checks=health_checks), django_db_blocker) as alias:
        assert one_request(alias) == 1
        before = connections[alias].connection

        postgres.restart()

        assert one_request(alias) == 1
        assert connections[alias].connection is not before
    assert health_checks is True


def test_without_health_checks_the_first_request_after_a_restart_would_fail(
    postgres: pg.PostgresCluster, django_db_blocker: Any
) -> None:
    with extra_database(postgres_settings(postgres, health_checks=False), django_db_blocker) as alias:
        assert one_request(alias) == 1

        postgres.restart()

        with pytest.raises(OperationalError):
            one_request(alias)
        assert one_request(alias) == 1
