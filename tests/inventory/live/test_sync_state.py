"""What SyncState says while a resync and a watch of the same kind both run: a failed resync
does not claim the watch disconnected, and a watch that connects does not hide that the
resync failed (only the next successful list clears its error)."""

from __future__ import annotations

import pytest

from inventory.live.resync import cluster_resync
from inventory.models import Cluster, Kind, Resource, SyncState
from tests.fakes.kube_api import FakeKubeAPI
from tests.inventory.live.objects import broken_model, model
from tests.inventory.live.watching import run_watch

pytestmark = pytest.mark.django_db

KIND = Kind.CLUSTER_BASE_MODEL


def state(cluster: Cluster) -> SyncState:
    return SyncState.objects.get(cluster=cluster, kind=KIND)


def test_a_failed_resync_leaves_a_connected_watch_connected(fake: FakeKubeAPI, cluster: Cluster) -> None:
    assert cluster_resync(cluster, kinds=[KIND]).errors == {}
    SyncState.objects.filter(cluster=cluster, kind=KIND).update(watch_connected=True)  # a watch holds it
    fake.fail_next(1, status=500, verbs="list")

    result = cluster_resync(cluster, kinds=[KIND])

    assert KIND in result.errors
    assert state(cluster).last_error
    assert state(cluster).watch_connected is True


def test_a_watch_that_connects_keeps_the_error_of_a_failed_resync(fake: FakeKubeAPI, cluster: Cluster) -> None:
    assert cluster_resync(cluster, kinds=[KIND]).errors == {}
    fake.fail_next(1, status=500, verbs="list")
    cluster_resync(cluster, kinds=[KIND])
    failed = state(cluster).last_error

    def driver(stop: object) -> None:
        assert fake.wait_for_watch("clusterbasemodels", timeout=5)
        fake.create(model("after-the-failure"))  # so the watch has surely connected

    run = run_watch(cluster, KIND, driver=driver, until=lambda events: bool(events))

    assert run.changes == [("ADDED", "after-the-failure", run.events[0].resource_version)]
    assert failed
    assert state(cluster).last_error == failed

    assert cluster_resync(cluster, kinds=[KIND]).errors == {}
    assert state(cluster).last_error == ""


def test_a_watch_that_connects_clears_the_error_of_a_failed_watch(fake: FakeKubeAPI, cluster: Cluster) -> None:
    assert cluster_resync(cluster, kinds=[KIND]).errors == {}
    fake.fail_next(1, status=500, verbs="watch")

    run = run_watch(cluster, KIND, driver=lambda stop: fake.create(model("later")), until=lambda events: bool(events))

    assert run.report.reconnects >= 1
    assert state(cluster).last_error == ""


def test_watch_events_keep_the_counts_of_objects_and_invalid_objects(fake: FakeKubeAPI, cluster: Cluster) -> None:
    fake.create(model("first"))
    assert cluster_resync(cluster, kinds=[KIND]).errors == {}

    def driver(stop: object) -> None:
        assert fake.wait_for_watch("clusterbasemodels", timeout=5)
        fake.create(broken_model("broken"))
        fake.create(model("second"))
        fake.delete(KIND, "first")
        fake.update(model("broken"))  # repaired

    run_watch(cluster, KIND, driver=driver, until=lambda events: len(events) == 4)

    stored = Resource.objects.filter(cluster=cluster, kind=KIND)
    assert (state(cluster).count, state(cluster).invalid) == (stored.count(), 0) == (2, 0)
