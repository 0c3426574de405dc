"""Watches of live clusters: every event applied as it comes, resumed without loss or doubles."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import DatabaseError
from django.utils import timezone

from inventory.live import leases
from inventory.live.events import watch_events_apply
from inventory.live.leases import watch_lease_claim, watch_lease_release, watch_lease_renew, watches_claim_idle
from inventory.live.resync import cluster_resync
from inventory.live.watch import WatchEvent
from inventory.models import Cluster, Kind, Resource, SyncState
from tests.fakes.kube_api import FakeKubeAPI
from tests.inventory.live.objects import broken_model, model, runtime
from tests.inventory.live.watching import run_watch
from tests.support.net import free_port

pytestmark = pytest.mark.django_db

CBM = Kind.CLUSTER_BASE_MODEL


def state(cluster: Cluster, kind: str = CBM) -> SyncState:
    return SyncState.objects.get(cluster=cluster, kind=kind)


def names(cluster: Cluster, kind: str = CBM) -> list[str]:
    return sorted(Resource.objects.filter(cluster=cluster, kind=kind).values_list("name", flat=True))


def changes_count(count: int):
    return lambda events: sum(e.type != "BOOKMARK" for e in events) >= count


def watch_requests(fake: FakeKubeAPI) -> list[str]:
    return [r.query.get("resourceVersion", "") for r in fake.requests if r.verb == "watch"]


def test_added_modified_and_deleted_events_are_applied_as_they_come(fake, cluster) -> None:
    cluster_resync(cluster, kinds=[CBM])
    during: list[tuple[bool, list[str], str]] = []

    stored = threading.Semaphore(0)

    def driver(stop: threading.Event) -> None:
        # One change at a time, each once the last is stored: a quiet stream, stored event by event.
        assert fake.wait_for_watch("clusterbasemodels")
        for change in (
            lambda: fake.create(model("m1")),
            lambda: fake.patch("clusterbasemodels", "m1", {"spec": {"modelArchitecture": "MistralForCausalLM"}}),
            lambda: fake.create(model("m2")),
            lambda: fake.delete("clusterbasemodels", "m1"),
        ):
            change()
            assert stored.acquire(timeout=10)

    def look(event: WatchEvent) -> None:  # runs in the watching thread, after each event is stored
        current = state(cluster)
        during.append((current.watch_connected, names(cluster), current.resource_version))
        stored.release()

    run = run_watch(cluster, CBM, driver=driver, until=changes_count(4), on_event=look)

    expected = [
        (e["type"], e["object"]["metadata"]["name"], e["resourceVersion"]) for e in fake.events("clusterbasemodels")
    ]
    assert run.changes == expected
    assert during == [
        (True, ["m1"], expected[0][2]),
        (True, ["m1"], expected[1][2]),
        (True, ["m1", "m2"], expected[2][2]),
        (True, ["m2"], expected[3][2]),
    ]
    assert (run.report.applied, run.report.ended) == (4, "stopped")
    after = state(cluster)
    assert (after.watch_connected, after.resource_version, after.count) == (False, expected[-1][2], 1)
    assert after.last_event_at is not None


def test_a_modified_event_stores_the_new_content(fake, cluster) -> None:
    fake.create(model("m1"))
    cluster_resync(cluster, kinds=[CBM])
    fake.patch("clusterbasemodels", "m1", {"spec": {"modelArchitecture": "MistralForCausalLM"}})

    run_watch(cluster, CBM, until=changes_count(1))

    resource = Resource.objects.get(cluster=cluster, name="m1")
    assert resource.obj == fake.get("clusterbasemodels", "m1")
    assert resource.model_architecture == "MistralForCausalLM"


def test_bookmarks_advance_the_stored_resource_version(fake, cluster) -> None:
    cluster_resync(cluster, kinds=[CBM])
    listed = state(cluster).resource_version

    def driver(stop: threading.Event) -> None:
        assert fake.wait_for_watch("clusterbasemodels")
        fake.create(runtime("elsewhere"))  # another kind moves the cluster's resourceVersion
        fake.bookmark("clusterbasemodels")

    run = run_watch(cluster, CBM, driver=driver, until=lambda events: any(e.type == "BOOKMARK" for e in events))

    assert run.report.bookmarks == 1
    assert state(cluster).resource_version == fake.resource_version != listed
    assert names(cluster) == []


def test_a_watch_dropped_mid_stream_resumes_without_losing_or_doubling_an_event(fake, cluster) -> None:
    cluster_resync(cluster, kinds=[CBM])
    start = state(cluster).resource_version
    fake.create(model("m1"))
    fake.create(model("m2"))
    fake.patch("clusterbasemodels", "m1", {"spec": {"modelArchitecture": "A"}})
    fake.delete("clusterbasemodels", "m2")
    fake.patch("clusterbasemodels", "m1", {"spec": {"modelArchitecture": "B"}})
    history = [
        (e["type"], e["object"]["metadata"]["name"], e["resourceVersion"]) for e in fake.events("clusterbasemodels")
    ]
    fake.drop_watch_after(2, kinds="clusterbasemodels")

    run = run_watch(cluster, CBM, until=changes_count(5))

    assert run.changes == history  # every event once, in order
    assert all(e.applied for e in run.events)
    # Resumed from the last event stored: aiohttp drops lines it had buffered when the connection
    # breaks, so the events after the last one applied come again (and are applied once).
    assert watch_requests(fake)[0] == start
    assert watch_requests(fake)[1:] in ([start], [history[0][2]], [history[1][2]])
    assert run.report.reconnects == 1
    after = state(cluster)
    assert after.watch_reconnects == 1
    assert after.resource_version == history[-1][2]
    assert after.last_error == ""  # cleared when the watch connected again
    assert after.last_error_at is not None
    assert names(cluster) == ["m1"]
    assert Resource.objects.get(cluster=cluster, name="m1").obj == fake.get("clusterbasemodels", "m1")


def test_an_expired_resource_version_lists_again_and_removes_what_was_deleted_meanwhile(fake, cluster) -> None:
    for name in ("m1", "m2", "m3"):
        fake.create(model(name))
    cluster_resync(cluster, kinds=[CBM])
    old = state(cluster).resource_version
    fake.delete("clusterbasemodels", "m2")
    fake.patch("clusterbasemodels", "m1", {"spec": {"modelArchitecture": "MistralForCausalLM"}})
    fake.create(model("m4"))
    fake.compact()
    relisted = fake.resource_version

    def driver(stop: threading.Event) -> None:
        # The second watch starts from the new list; once it is open, the relist is stored.
        assert fake.wait_for(lambda: len(watch_requests(fake)) == 2)
        assert fake.wait_for_watch("clusterbasemodels")
        stop.set()

    run = run_watch(cluster, CBM, driver=driver)

    assert watch_requests(fake) == [old, relisted]
    assert [r.verb for r in fake.requests][-3:] == ["watch", "list", "watch"]
    assert (run.report.relists, run.report.ended) == (1, "stopped")
    assert names(cluster) == ["m1", "m3", "m4"]
    assert Resource.objects.get(cluster=cluster, name="m1").model_architecture == "MistralForCausalLM"
    after = state(cluster)
    assert (after.resource_version, after.count, after.watch_reconnects) == (relisted, 3, 1)


def test_a_watch_of_a_never_listed_kind_lists_first(fake, cluster) -> None:
    fake.create(model("m1"))

    def driver(stop: threading.Event) -> None:
        assert fake.wait_for_watch("clusterbasemodels")
        fake.create(model("m2"))

    run_watch(cluster, CBM, driver=driver, until=changes_count(1))

    assert names(cluster) == ["m1", "m2"]
    assert [r.verb for r in fake.requests if r.plural == "clusterbasemodels"] == ["list", "watch"]


def test_a_malformed_object_from_a_watch_is_stored_with_its_error(fake, cluster) -> None:
    cluster_resync(cluster, kinds=[CBM])
    fake.create(broken_model("broken"))
    fake.create(model("fine"))

    run_watch(cluster, CBM, until=changes_count(2))

    errors = dict(Resource.objects.filter(cluster=cluster).values_list("name", "error"))
    assert errors == {"broken": "spec.modelFormat: expected a mapping, got str", "fine": ""}
    assert (state(cluster).count, state(cluster).invalid) == (2, 1)


def test_stop_ends_a_silent_watch_at_once(fake, cluster) -> None:
    cluster_resync(cluster, kinds=[CBM])

    def driver(stop: threading.Event) -> None:
        assert fake.wait_for_watch("clusterbasemodels")
        stop.set()

    run = run_watch(cluster, CBM, driver=driver)

    assert run.report.ended == "stopped"
    assert run.seconds < 5  # the stream itself would have lasted the half lease (30 s)
    assert fake.wait_for(lambda: fake.active_watches() == 0)


def test_a_missing_crd_ends_the_watch_with_the_error_recorded(fake, cluster) -> None:
    cluster_resync(cluster)
    fake.remove_kind("clusterservingruntimes")

    run = run_watch(cluster, Kind.CLUSTER_SERVING_RUNTIME)

    assert run.report.ended == "error"
    assert run.report.error is not None
    assert run.report.error.code == "not_found"
    assert (
        state(cluster, Kind.CLUSTER_SERVING_RUNTIME).last_error == "OME CRD clusterservingruntimes not installed (404)"
    )
    assert state(cluster, CBM).last_error == ""


def test_an_unreachable_server_is_retried_with_backoff_until_the_deadline(db, cluster_for) -> None:
    down = cluster_for(FakeKubeAPI(port=free_port()), "down")

    run = run_watch(down, CBM, deadline=2)

    assert run.report.ended == "deadline"
    assert run.report.reconnects >= 2
    after = state(down)
    assert after.last_error.startswith("API server unreachable (")
    assert after.watch_reconnects == run.report.reconnects
    assert after.watch_connected is False


def test_an_event_the_inventory_already_reflects_is_skipped(fake, cluster) -> None:
    fake.create(model("m1"))
    cluster_resync(cluster, kinds=[CBM])
    listed = state(cluster).resource_version
    stale = {**model("m1"), "metadata": {"name": "m1", "resourceVersion": str(int(listed) - 1)}}
    newer = {**model("m9"), "metadata": {"name": "m9", "resourceVersion": str(int(listed) + 5)}}

    assert watch_events_apply(cluster, CBM, [("DELETED", stale), ("ADDED", newer)]) == [False, True]

    assert names(cluster) == ["m1", "m9"]
    assert state(cluster).resource_version == str(int(listed) + 5)


def test_a_watch_ends_when_another_owner_takes_its_lease_and_leaves_the_new_holders_state(fake, cluster) -> None:
    cluster_resync(cluster, kinds=[CBM])
    assert watch_lease_claim(cluster, CBM, owner="first")
    taken = threading.Event()

    def take_over(event: WatchEvent) -> None:  # in the watching thread: the database's only user
        # Taken by force (as sync_cluster does); the first owner notices at its next renewal.
        assert watch_lease_claim(cluster, CBM, owner="second", force=True)
        SyncState.objects.filter(cluster=cluster, kind=CBM).update(watch_connected=True)  # the second connected
        taken.set()

    def driver(stop: threading.Event) -> None:
        assert fake.wait_for_watch("clusterbasemodels")
        fake.create(model("m1"))
        assert taken.wait(5)
        fake.close_watches("clusterbasemodels")  # the stream ends; the watch renews before the next

    run = run_watch(cluster, CBM, driver=driver, lease="first", on_event=take_over)

    assert run.report.ended == "lease lost"
    assert len(watch_requests(fake)) == 1
    assert state(cluster).watch_owner == "second"
    assert state(cluster).watch_connected  # the first did not mark the second's watch lost


def test_leases_go_to_one_owner_at_a_time_until_released_or_expired(fake, cluster) -> None:
    assert watch_lease_claim(cluster, CBM, owner="a")
    assert not watch_lease_claim(cluster, CBM, owner="b")
    assert watch_lease_renew(cluster, CBM, owner="a")
    assert not watch_lease_renew(cluster, CBM, owner="b")

    watch_lease_release(cluster, CBM, owner="a")
    assert watch_lease_claim(cluster, CBM, owner="b")

    SyncState.objects.filter(cluster=cluster, kind=CBM).update(watch_lease_until=timezone.now() - timedelta(seconds=1))
    assert watch_lease_claim(cluster, CBM, owner="c")
    assert watch_lease_claim(cluster, CBM, owner="d", force=True)
    assert state(cluster).watch_owner == "d"


def test_a_claim_that_fails_midway_leaves_the_lease_and_its_state_as_they_were(fake, cluster, monkeypatch) -> None:
    assert watch_lease_claim(cluster, CBM, owner="a")
    SyncState.objects.filter(cluster=cluster, kind=CBM).update(watch_connected=True)

    def failing() -> None:  # the claim's last write fails (after it marked the old holder disconnected)
        raise DatabaseError("connection lost")

    monkeypatch.setattr(leases, "_lease_expiry", failing)
    with pytest.raises(DatabaseError):
        watch_lease_claim(cluster, CBM, owner="b", force=True)

    kept = state(cluster)
    assert kept.watch_owner == "a"
    assert kept.watch_connected


def skew_clock(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """This process's clock runs `seconds` ahead (behind when negative); the database's does not."""
    real = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real() + timedelta(seconds=seconds))


def test_leases_run_on_the_database_clock_so_a_skewed_worker_neither_steals_nor_keeps_one(
    fake, cluster, settings, monkeypatch
) -> None:
    settings.OME_WATCH_LEASE = 60
    assert watch_lease_claim(cluster, CBM, owner="a")

    skew_clock(monkeypatch, 120)  # worker b's clock is two leases ahead: a's lease looks run out
    stolen = watch_lease_claim(cluster, CBM, owner="b")
    monkeypatch.undo()
    skew_clock(monkeypatch, -120)  # worker a's clock is two leases behind as it renews
    assert watch_lease_renew(cluster, CBM, owner="a")
    monkeypatch.undo()

    renewed = state(cluster)
    assert not stolen
    assert renewed.watch_owner == "a"
    assert renewed.watch_lease_until is not None
    assert timedelta(seconds=50) < renewed.watch_lease_until - timezone.now() <= timedelta(seconds=61)


def test_watches_claim_idle_claims_each_live_cluster_whole_and_once(fake, cluster) -> None:
    Cluster.objects.create(name="snap", source=Cluster.Source.MANIFESTS, manifests=["demo"])
    assert watch_lease_claim(cluster, CBM, owner="busy")
    assert watches_claim_idle() == []  # not the other four kinds: the cluster would be split
    watch_lease_release(cluster, CBM, owner="busy")

    first = watches_claim_idle()
    second = watches_claim_idle()

    assert sorted(claim.kind for claim in first) == sorted(Kind.values)
    assert {claim.cluster_id for claim in first} == {cluster.pk}
    assert len({claim.owner for claim in first}) == len(first)
    assert second == []


def test_a_watch_asks_again_at_once_when_its_stream_ends_so_the_kind_is_never_unwatched(
    fake, cluster, settings
) -> None:
    settings.OME_WATCH_LEASE = 2  # the server ends each stream after a second (half the lease)
    cluster_resync(cluster, kinds=[CBM])
    listed = state(cluster).resource_version
    assert watch_lease_claim(cluster, CBM, owner="w")
    owners: list[str] = []

    def driver(stop: threading.Event) -> None:
        assert fake.wait_for(lambda: len(watch_requests(fake)) >= 4, timeout=8)
        fake.create(model("late"))

    run = run_watch(
        cluster,
        CBM,
        driver=driver,
        lease="w",
        until=changes_count(1),
        on_event=lambda e: owners.append(state(cluster).watch_owner),
    )

    assert run.report.ended == "stopped"
    assert run.report.reconnects == 0
    assert run.seconds < 8  # four streams back to back, not one per ensure_watches tick
    assert watch_requests(fake)[:4] == [listed] * 4  # each from the stored resourceVersion
    assert owners == ["w"]
    assert names(cluster) == ["late"]


def test_an_event_the_database_refuses_is_rejected_alone_and_its_batch_is_stored(fake, cluster, monkeypatch) -> None:
    from django.db import DataError

    from inventory.live import events

    cluster_resync(cluster, kinds=[CBM])
    listed = int(state(cluster).resource_version)
    real = events.events_apply

    def refusing(cluster_, batch):
        if any(obj["metadata"]["name"] == "refused" for _, obj in batch):
            raise DataError("value too long for type character varying(8)")
        return real(cluster_, batch)

    monkeypatch.setattr(events, "events_apply", refusing)
    batch = [
        ("ADDED", {**model(name), "metadata": {"name": name, "resourceVersion": str(listed + offset)}})
        for offset, name in enumerate(["m1", "refused", "m3"], start=1)
    ]

    assert watch_events_apply(cluster, CBM, batch) == [True, True, True]

    assert names(cluster) == ["m1", "m3"]
    after = state(cluster)
    assert after.resource_version == str(listed + 3)
    assert after.rejected == [
        f"ClusterBaseModel event at {listed + 2} could not be stored: value too long for type character varying(8)"
    ]


def test_a_batch_is_announced_once_and_a_failing_receiver_neither_undoes_it_nor_silences_the_others(
    fake, cluster, django_capture_on_commit_callbacks
) -> None:
    from inventory.signals import inventory_changed

    cluster_resync(cluster, kinds=[CBM])
    listed = int(state(cluster).resource_version)
    announced: list[list[str]] = []

    def failing(sender, cluster_id, changes, **kwargs) -> None:
        raise RuntimeError("a receiver's own failure")

    def listening(sender, cluster_id, changes, **kwargs) -> None:
        announced.append([change.name for change in changes])

    batch = [
        ("ADDED", {**model(name), "metadata": {"name": name, "resourceVersion": str(listed + offset)}})
        for offset, name in enumerate(["m1", "m2", "m3"], start=1)
    ]
    inventory_changed.connect(failing)
    inventory_changed.connect(listening)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            assert watch_events_apply(cluster, CBM, batch) == [True, True, True]
    finally:
        inventory_changed.disconnect(failing)
        inventory_changed.disconnect(listening)

    assert announced == [["m1", "m2", "m3"]]
    assert names(cluster) == ["m1", "m2", "m3"]
