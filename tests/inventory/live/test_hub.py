"""The watch hub's own rules (many clusters at once: test_many_clusters.py)."""

from __future__ import annotations

import pytest

from inventory.live.hub import CallerThread, WatchHub
from inventory.live.leases import watch_lease_claim
from inventory.live.resync import cluster_resync
from inventory.models import Kind, Resource, SyncState
from tests.inventory.live.objects import model

pytestmark = pytest.mark.django_db

CBM = Kind.CLUSTER_BASE_MODEL


def owner(cluster) -> str:
    return SyncState.objects.get(cluster=cluster, kind=CBM).watch_owner


def test_a_watch_held_here_takes_over_its_kind_claimed_again_instead_of_stopping(fake, cluster) -> None:
    cluster_resync(cluster, kinds=[CBM])
    database = CallerThread()
    hub = WatchHub(database).start()
    try:
        assert watch_lease_claim(cluster, CBM, owner="first")
        report = hub.hold(cluster.pk, CBM, lease="first")
        assert database.run_until(lambda: fake.active_watches("clusterbasemodels") == 1, timeout=10)
        # The lease lapsed (a stalled renewal) and ensure_watches claimed it again for this hub.
        assert watch_lease_claim(cluster, CBM, owner="second", force=True)

        assert hub.hold(cluster.pk, CBM, lease="second") is report
        fake.close_watches("clusterbasemodels")  # the next request renews: with the new lease
        assert database.run_until(lambda: len([r for r in fake.requests if r.verb == "watch"]) == 2, timeout=10)
        fake.create(model("after"))
        assert database.run_until(lambda: Resource.objects.filter(name="after").exists(), timeout=10)

        assert not report.done()
        assert owner(cluster) == "second"
    finally:
        hub.stop()
    assert report.result().ended == "stopped"
    assert owner(cluster) == ""


def test_a_full_hub_takes_no_more_watches(fake, cluster) -> None:
    hub = WatchHub(CallerThread(), capacity=1).start()
    try:
        assert hub.hold(cluster.pk, CBM, lease=None) is not None
        assert hub.hold(cluster.pk, Kind.BASE_MODEL, lease=None) is None
        assert hub.held() == {(cluster.pk, CBM)}
    finally:
        hub.stop()
