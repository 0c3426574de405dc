"""One watch hub holds the watches of many live clusters (issue 10): a bounded number of threads
whatever the number of clusters, every cluster's events reach the inventory, and a fault in one
cluster does not hold up the others. The clusters are members of one FakeKubeFleet (one server,
a path prefix per cluster), watched through the real kubernetes.aio client.

The hub's database calls run in the test's thread (CallerThread), which owns the test database;
tests/inventory/live/test_watch_worker.py runs the production set-up, a Celery watch worker with
its database threads, and kills it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from inventory.live.hub import CallerThread, WatchHub
from inventory.live.leases import watch_lease_claim
from inventory.models import Cluster, Kind, Resource, SyncState
from tests.fakes.kube_api import FakeKubeFleet
from tests.inventory.live.objects import model, one_of_each

pytestmark = pytest.mark.django_db

# 100 in the benchmark (benchmarks/many_clusters.py); set OME_TEST_CLUSTERS=100 to run
# these tests at that size too.
CLUSTERS = int(os.environ.get("OME_TEST_CLUSTERS", "40"))
WAIT = 60.0


@pytest.fixture
def fleet() -> Iterator[FakeKubeFleet]:
    with FakeKubeFleet([f"c{index:03}" for index in range(CLUSTERS)]) as fleet:
        for member in fleet.members.values():
            for obj in one_of_each():
                member.create(obj)
        yield fleet
        assert not fleet.all_errors(), "\n".join(fleet.all_errors())


@pytest.fixture
def clusters(fleet: FakeKubeFleet, tmp_path: Path) -> dict[str, Cluster]:
    return {
        name: Cluster.objects.create(
            name=name,
            source=Cluster.Source.KUBECONFIG,
            kubeconfig=str(member.write_kubeconfig(tmp_path / f"{name}.kubeconfig")),
        )
        for name, member in fleet.members.items()
    }


class Held:
    """A hub holding every kind of every cluster, its database calls run by `run_until`."""

    def __init__(self, clusters: dict[str, Cluster]) -> None:
        self.database = CallerThread()
        self.before = set(threading.enumerate())
        self.hub = WatchHub(self.database, capacity=len(clusters) * len(Kind.values)).start()
        for cluster in clusters.values():
            for kind in Kind.values:
                assert watch_lease_claim(cluster, kind, owner="hub")
                assert self.hub.hold(cluster.pk, kind, lease="hub") is not None

    def run_until(self, done: Callable[[], bool], timeout: float = WAIT) -> None:
        assert self.database.run_until(done, timeout), "not reached in time"

    def new_threads(self) -> list[str]:
        """Threads started since the hub was made, but for the fake server's own."""
        return sorted(
            thread.name
            for thread in set(threading.enumerate()) - self.before
            if "process_request_thread" not in thread.name and not thread.name.startswith("FakeKube")
        )


@pytest.fixture
def held(clusters: dict[str, Cluster]) -> Iterator[Held]:
    held = Held(clusters)
    yield held
    held.hub.stop()


def all_connected() -> bool:
    states = SyncState.objects.all()
    return states.count() == CLUSTERS * len(Kind.values) and not states.filter(watch_connected=False).exists()


def stored_names(cluster: Cluster, kind: str = Kind.CLUSTER_BASE_MODEL) -> set[str]:
    return set(Resource.objects.filter(cluster=cluster, kind=kind).values_list("name", flat=True))


def clusters_with(name: str) -> set[str]:
    return set(Resource.objects.filter(name=name).values_list("cluster__name", flat=True))


def test_one_hub_holds_every_watch_of_every_cluster_with_a_few_threads(
    fleet: FakeKubeFleet, clusters: dict[str, Cluster], held: Held
) -> None:
    held.run_until(all_connected)
    held.run_until(
        lambda: sum(member.active_watches() for member in fleet.members.values()) == len(Kind.values) * CLUSTERS
    )

    threads = held.new_threads()
    # The loop's thread and at most its two name-resolving ones: none per cluster or per watch.
    assert 1 <= len(threads) <= 3, threads
    assert Resource.objects.count() == CLUSTERS * len(one_of_each())
    assert not SyncState.objects.exclude(last_error="").exists()

    for index, member in enumerate(fleet.members.values()):
        member.create(model(f"late-{index}"))
        member.delete("clusterbasemodels", "llama")
    held.run_until(lambda: len(clusters_with("late-0")) + len(clusters_with("llama")) == 1)
    held.run_until(lambda: Resource.objects.filter(name__startswith="late-").count() == CLUSTERS)

    for index, (name, cluster) in enumerate(clusters.items()):
        assert stored_names(cluster) == {f"late-{index}"}, name
        assert SyncState.objects.get(cluster=cluster, kind=Kind.CLUSTER_BASE_MODEL).resource_version == (
            fleet[name].resource_version
        )
    assert len(held.new_threads()) <= 3


def test_a_failing_and_a_hung_cluster_do_not_hold_up_the_others(
    fleet: FakeKubeFleet, clusters: dict[str, Cluster], held: Held, settings
) -> None:
    held.run_until(all_connected)
    failing, hung = fleet["c000"], fleet["c001"]
    failing.fail_next(n=10_000, status=500, verbs=["watch", "list"])
    failing.close_watches()
    hung.delay(300, verbs=["watch", "list"])
    hung.close_watches()
    held.run_until(lambda: SyncState.objects.filter(cluster=clusters["c000"], watch_reconnects__gte=2).count() == 5)

    for member in fleet.members.values():
        member.create(model("during"))
    others = set(clusters) - {"c000", "c001"}
    held.run_until(lambda: clusters_with("during") == others)

    failed = SyncState.objects.filter(cluster=clusters["c000"])
    assert set(failed.values_list("last_error", flat=True)) == {"API server error (500)"}
    assert not SyncState.objects.filter(cluster__name__in=others).exclude(last_error="").exists()
    assert not SyncState.objects.filter(cluster__name__in=others, watch_connected=False).exists()

    # Once the server answers again, the failing cluster catches up on its own.
    failing.clear_faults()
    held.run_until(lambda: clusters_with("during") == others | {"c000"})
    held.run_until(lambda: not SyncState.objects.filter(cluster=clusters["c000"], watch_connected=False).exists())
    hung.delay(0)


def test_stopping_the_hub_closes_every_watch_and_gives_the_leases_back(
    fleet: FakeKubeFleet, clusters: dict[str, Cluster], held: Held
) -> None:
    held.run_until(all_connected)

    held.hub.stop()

    assert sum(member.active_watches() for member in fleet.members.values()) == 0
    assert set(SyncState.objects.values_list("watch_owner", "watch_connected")) == {("", False)}
    assert held.new_threads() == []
    assert held.hub.hold(clusters["c000"].pk, Kind.BASE_MODEL, lease="late") is None
