"""Leases name the hub that holds them (inventory.live.shares.hub_owner), so a hub takes the
clusters of a hub that stopped announcing itself without waiting for their leases to lapse; and
a cluster is claimed whole, every kind or none, so two holders never split it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.live.leases import watch_lease_claim, watches_claim_idle
from inventory.live.shares import hub_owner, owner_hub
from inventory.models import Kind, SyncState

pytestmark = pytest.mark.django_db

CBM = Kind.CLUSTER_BASE_MODEL


def holders(cluster) -> dict[str, str | None]:
    """kind -> the hub its lease names (None: nobody's, or not a hub's)."""
    return {
        kind: owner_hub(owner)
        for kind, owner in SyncState.objects.filter(cluster=cluster).values_list("kind", "watch_owner")
    }


def test_a_token_names_its_hub_and_only_a_hubs_token_does() -> None:
    assert owner_hub(hub_owner("vm:42")) == "vm:42"
    assert owner_hub(hub_owner("a/b")) == "a/b"
    assert hub_owner("vm:42") != hub_owner("vm:42")
    assert owner_hub("task:0123") is None
    assert owner_hub("") is None


def test_a_hub_takes_the_leases_of_a_hub_that_no_longer_runs_before_they_lapse(fake, cluster) -> None:
    assert len(watches_claim_idle(hub="a", alive={"a"})) == len(Kind.values)
    assert SyncState.objects.filter(cluster=cluster, watch_lease_until__gt=timezone.now()).count() == len(Kind.values)

    assert watches_claim_idle(hub="b", alive={"a", "b"}) == []  # a runs: its leases stand
    assert watches_claim_idle() == []  # ensure_watches knows no hubs: it waits for leases to lapse

    taken = watches_claim_idle(hub="b", alive={"b"})  # a stopped announcing itself

    assert sorted(claim.kind for claim in taken) == sorted(Kind.values)
    assert set(holders(cluster).values()) == {"b"}
    # The new holder has not connected yet; the old one's "connected" no longer stands, lost from
    # now (not from when its lease would have run out).
    assert not SyncState.objects.filter(cluster=cluster, watch_connected=True).exists()
    lost = SyncState.objects.filter(cluster=cluster).values_list("watch_lost_at", flat=True)
    assert all(at is not None and at <= timezone.now() for at in lost)


def test_a_hub_whose_id_starts_another_running_hubs_id_is_taken_over(fake, cluster) -> None:
    # Hub ids are free text: "a/b" stopped while "a" runs; its tokens must not pass for a's.
    assert len(watches_claim_idle(hub="a/b", alive={"a", "a/b"})) == len(Kind.values)

    taken = watches_claim_idle(hub="c", alive={"a", "c"})

    assert sorted(claim.kind for claim in taken) == sorted(Kind.values)
    assert set(holders(cluster).values()) == {"c"}


def test_a_lease_that_names_no_hub_is_taken_only_once_it_lapses(fake, cluster) -> None:
    assert watch_lease_claim(cluster, CBM, owner="task:0123")
    assert watches_claim_idle(hub="b", alive={"b"}) == []

    SyncState.objects.filter(cluster=cluster).update(watch_lease_until=timezone.now() - timedelta(seconds=1))

    assert len(watches_claim_idle(hub="b", alive={"b"})) == len(Kind.values)


def test_a_cluster_is_never_split_and_its_holder_takes_back_a_kind_left_idle(fake, cluster) -> None:
    assert len(watches_claim_idle(hub="a", alive={"a", "b"})) == len(Kind.values)
    SyncState.objects.filter(cluster=cluster, kind=CBM).update(
        watch_owner="", watch_lease_until=None
    )  # its watch ended

    assert watches_claim_idle(hub="b", alive={"a", "b"}) == []
    assert watches_claim_idle() == []
    # The holder takes its idle kind back even with no room for another cluster.
    repaired = watches_claim_idle(0, hub="a", alive={"a", "b"})

    assert [claim.kind for claim in repaired] == [CBM]
    assert set(holders(cluster).values()) == {"a"}


def test_two_claimers_of_one_cluster_each_get_all_of_it_or_nothing(fake, cluster) -> None:
    first = watches_claim_idle(hub="a", alive={"a", "b"})
    second = watches_claim_idle(hub="b", alive={"a", "b"})

    assert (len(first), len(second)) == (len(Kind.values), 0)
    assert set(holders(cluster).values()) == {"a"}
