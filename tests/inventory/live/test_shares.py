"""Watch hubs share the clusters fairly (inventory.live.shares): a hub that starts while another
holds every cluster gets half of them, and takes them all back when the other stops. Two hubs
with the workers' set-up (announcing themselves in a real Redis), their database calls run in
the test's thread; benchmarks/scale_out.py does the same with Celery worker processes."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.utils import timezone

from inventory.live.hub import CallerThread, WatchHub
from inventory.live.shares import HUBS_KEY, SINCE_KEY, Hubs, fair_share, hubs_announce, hubs_withdraw, owner_hub
from inventory.models import Cluster, Kind, SyncState
from tests.fakes.kube_api import FakeKubeFleet
from tests.inventory.live.objects import one_of_each

pytestmark = pytest.mark.django_db

CLUSTERS = 4
WAIT = 60.0


@pytest.fixture
def clusters(tmp_path: Path) -> Iterator[FakeKubeFleet]:
    with FakeKubeFleet([f"c{index}" for index in range(CLUSTERS)]) as fleet:
        for name, member in fleet.members.items():
            for obj in one_of_each():
                member.create(obj)
            kubeconfig = member.write_kubeconfig(tmp_path / f"{name}.kubeconfig")
            Cluster.objects.create(name=name, source=Cluster.Source.KUBECONFIG, kubeconfig=str(kubeconfig))
        yield fleet


@pytest.fixture
def announcing(settings, redis_server) -> None:
    settings.CELERY_BROKER_URL = redis_server.url
    settings.OME_WATCH_LEASE = 3  # the hubs announce themselves every second


def held_clusters(hub: WatchHub) -> set[int]:
    return {cluster_id for cluster_id, _ in hub.held()}


def watched_by(hub: WatchHub) -> int:
    """How many kinds are watched (connected) under a lease that names `hub`."""
    owners = SyncState.objects.filter(watch_connected=True).values_list("watch_owner", flat=True)
    return sum(owner_hub(owner) == hub.share_as for owner in owners)


def every_kind_watched_once(fleet: FakeKubeFleet) -> bool:
    streams = Counter((cluster, plural) for cluster, plural, _ in fleet.watch_peers())
    connected = SyncState.objects.filter(watch_connected=True).count()
    return len(streams) == connected == CLUSTERS * len(Kind.values) and set(streams.values()) == {1}


def shared_evenly(one: WatchHub, other: WatchHub, clusters: FakeKubeFleet) -> bool:
    """Each of two hubs holds half the clusters, and every kind is watched once."""
    return len(held_clusters(one)) == len(held_clusters(other)) == CLUSTERS // 2 and every_kind_watched_once(clusters)


@pytest.mark.parametrize(("clusters", "hubs", "share"), [(200, 2, 100), (201, 2, 101), (3, 4, 1), (0, 1, 1), (5, 0, 5)])
def test_a_fair_share_covers_every_cluster(clusters: int, hubs: int, share: int) -> None:
    assert fair_share(clusters, hubs) == share


def announcing_since(client: redis.Redis, hub: str, seconds: float) -> None:
    """As if `hub` had announced itself without a gap for `seconds`."""
    now = float(client.get(SINCE_KEY.format(hub=hub)) or 0)
    client.set(SINCE_KEY.format(hub=hub), now - seconds, keepttl=True)


def test_a_hub_is_sure_who_stopped_only_after_announcing_without_a_gap_for_half_a_lease(
    announcing: None, redis_server, settings
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    client.delete(HUBS_KEY)
    assert hubs_announce("a") == Hubs(frozenset({"a"}), sure=False)  # just started
    assert hubs_announce("b") == Hubs(frozenset({"a", "b"}), sure=False)
    announcing_since(client, "b", settings.OME_WATCH_LEASE / 2)
    assert hubs_announce("b") == Hubs(frozenset({"a", "b"}), sure=True)

    # Redis lost the hubs' announcements (a restart without persistence; after an outage longer
    # than half a lease each hub's own announcement and gap marker are gone too): "a" may well
    # run, so "b" is not sure it stopped, and takes none of its clusters before they lapse.
    client.delete(HUBS_KEY, SINCE_KEY.format(hub="b"))
    assert hubs_announce("b") == Hubs(frozenset({"b"}), sure=False)

    # A gap of half a lease (an outage, or a starved hub) starts the count again.
    announcing_since(client, "b", settings.OME_WATCH_LEASE / 2)
    assert hubs_announce("b").sure
    deadline = time.monotonic() + WAIT
    while client.exists(SINCE_KEY.format(hub="b")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not hubs_announce("b").sure

    hubs_withdraw("b")
    assert not client.exists(SINCE_KEY.format(hub="b"))
    hubs_withdraw("a")


def test_a_hub_announces_itself_while_host_name_lookups_hang(announcing: None, redis_server) -> None:
    # The loop's default pool resolves API servers' host names (and fetches Argo CD members'
    # kubeconfigs): slow DNS during a reconnect storm must not make a running hub pass for dead.
    client = redis.Redis.from_url(redis_server.url)
    database = CallerThread()
    hub = WatchHub(database, share_as="resolving").start()
    release = threading.Event()
    try:
        assert database.run_until(lambda: client.zscore(HUBS_KEY, "resolving") is not None, WAIT)

        async def lookups_that_hang() -> None:
            loop = asyncio.get_running_loop()
            await asyncio.gather(*(loop.run_in_executor(None, release.wait) for _ in range(8)))

        hung = asyncio.run_coroutine_threadsafe(lookups_that_hang(), hub._loop)
        before = client.zscore(HUBS_KEY, "resolving")
        assert database.run_until(lambda: client.zscore(HUBS_KEY, "resolving") != before, WAIT)
        assert not hung.done()
    finally:
        release.set()
        hub.stop()


def test_a_hub_refuses_a_cluster_beyond_its_share_but_not_another_kind_of_one_it_holds() -> None:
    hub = WatchHub(CallerThread())
    hub.share = 1

    assert hub.hold(1, Kind.CLUSTER_BASE_MODEL, lease="a") is not None
    assert hub.hold(1, Kind.BASE_MODEL, lease="b") is not None
    assert hub.hold(2, Kind.CLUSTER_BASE_MODEL, lease="c") is None
    assert held_clusters(hub) == {1}


def test_clusters_spread_over_the_hubs_and_come_back_when_one_stops(
    clusters: FakeKubeFleet, announcing: None, redis_server
) -> None:
    database = CallerThread()
    first = WatchHub(database, share_as="first").start()
    second = None
    try:
        # Alone, the first hub takes every idle cluster itself (no watch task needed).
        assert database.run_until(lambda: every_kind_watched_once(clusters), WAIT)
        assert len(held_clusters(first)) == CLUSTERS

        second = WatchHub(database, share_as="second").start()
        # The first gives back the clusters beyond its share; the second takes them.
        assert database.run_until(lambda: shared_evenly(first, second, clusters), WAIT)
        assert not held_clusters(first) & held_clusters(second)

        second.stop()
        assert database.run_until(
            lambda: len(held_clusters(first)) == CLUSTERS and every_kind_watched_once(clusters), WAIT
        )
    finally:
        for hub in (first, second):
            if hub is not None:
                hub.stop()


def test_a_round_that_fails_unexpectedly_does_not_end_the_balancing(
    clusters: FakeKubeFleet, announcing: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inventory.live import hub as hub_module

    claim_idle = hub_module.watches_claim_idle
    failures = iter([RuntimeError("one bad round")])

    def failing_once(count: int, **kwargs: Any) -> list:
        for error in failures:
            raise error
        return claim_idle(count, **kwargs)

    monkeypatch.setattr(hub_module, "watches_claim_idle", failing_once)
    database = CallerThread()
    alone = WatchHub(database, share_as="alone").start()
    try:
        # The first round raises; a later one still takes every idle cluster.
        assert database.run_until(lambda: every_kind_watched_once(clusters), WAIT)
    finally:
        alone.stop()


def test_a_stalled_hubs_clusters_move_before_its_leases_lapse_and_it_lets_them_go(
    clusters: FakeKubeFleet, announcing: None
) -> None:
    database = CallerThread()
    stalled = WatchHub(database, share_as="stalled").start()
    survivor = None
    resume = threading.Event()
    try:
        assert database.run_until(lambda: every_kind_watched_once(clusters), WAIT)
        # Its loop stops as in a SIGKILL or a long CPU starvation: no renewal, no announcement.
        stalled._loop.call_soon_threadsafe(resume.wait)
        database.run_until(lambda: False, timeout=1)  # the calls it queued before
        # Leases that cannot lapse within the test: only the hub's silence can move them.
        SyncState.objects.update(watch_lease_until=timezone.now() + timedelta(hours=1))

        survivor = WatchHub(database, share_as="survivor").start()
        assert database.run_until(lambda: watched_by(survivor) == CLUSTERS * len(Kind.values), WAIT)
        assert len(held_clusters(survivor)) == CLUSTERS

        # Back to life, it finds its leases taken at its next renewal and stops those watches; the
        # two hubs then share the clusters, each kind watched once.
        resume.set()
        assert database.run_until(lambda: shared_evenly(stalled, survivor, clusters), WAIT)
        assert not held_clusters(stalled) & held_clusters(survivor)
    finally:
        resume.set()
        for hub in (stalled, survivor):
            if hub is not None:
                hub.stop()
