"""Watch leases: one watcher per kind, renewed while it watches, taken over once it lapses.

Lease times are the database's clock (`Now()` in the statements), never a process's: a worker
whose clock is skewed can neither keep a lease past its time nor take one that has not run out.
A watch hub's leases name it (inventory.live.shares.hub_owner), so that the other hubs take them
as soon as it stops announcing itself, before they run out. Clusters are claimed whole.
"""

from __future__ import annotations

import functools
import operator
import uuid
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Case, DateTimeField, ExpressionWrapper, F, Q, Value, When
from django.db.models.functions import Coalesce, Least, Now

from core.db import retried_transaction

from ..locks import cluster_write_lock, cluster_write_lock_or_skip
from ..models import Cluster, Kind, SyncState
from ..sources import live_source_keys
from .shares import HUB_OWNER, hub_owner, hub_tokens, owner_hub


def _lease_expiry() -> ExpressionWrapper:
    """One lease from now, by the database's clock."""
    return ExpressionWrapper(Now() + timedelta(seconds=settings.OME_WATCH_LEASE), output_field=DateTimeField())


def watch_lease_claim(cluster: Cluster, kind: str, *, owner: str, force: bool = False) -> bool:
    """Take the watch lease of one kind for `owner`, unless someone else holds a live one
    (`force` takes it anyway; the holder notices when it next renews, and stops)."""
    return watch_leases_claim(cluster, {kind: owner}, force=force) == [kind]


@retried_transaction
def watch_leases_claim(
    cluster: Cluster,
    owners: dict[str, str],
    *,
    force: bool = False,
    whole: bool = False,
    alive: Collection[str] | None = None,
) -> list[str]:
    """Take the watch lease of each kind of `owners` for its owner, and return the kinds taken:
    with `whole`, all of them or none. With `alive` (the watch hubs that run, see
    inventory.live.shares), the leases of a hub that no longer runs are taken too, without
    waiting for them to lapse. One transaction, after the cluster's write lock (inventory.locks,
    the writers' one order), and a failed claim leaves the states as they were. A claim does not
    wait for that lock: while another transaction holds it (a writer, another claimer, a frozen
    worker's batch) it takes nothing, at once, and the claimer's next round tries again; only a
    `force` claim waits."""
    with transaction.atomic():
        if force:
            cluster_write_lock(cluster.pk)
        elif not cluster_write_lock_or_skip(cluster.pk):
            return []
        return _claim(cluster, owners, force=force, whole=whole, alive=alive)


def _claimable(owners: dict[str, str], alive: Collection[str] | None) -> Q:
    """Leases nobody holds, lapsed, the claimer's own, or (given `alive`) a stopped hub's."""
    claimable = Q(watch_owner="") | Q(watch_lease_until__isnull=True) | Q(watch_lease_until__lte=Now())
    claimable |= Q(watch_owner__in=owners.values())  # a holder claims its own lease again
    if alive is not None:
        running = [Q(watch_owner__startswith=hub_tokens(hub)) for hub in alive]
        claimable |= Q(watch_owner__startswith=HUB_OWNER) & ~functools.reduce(operator.or_, running, Q(pk__in=[]))
    return claimable


def _claim(
    cluster: Cluster, owners: dict[str, str], *, force: bool, whole: bool, alive: Collection[str] | None
) -> list[str]:
    existing = set(SyncState.objects.filter(cluster=cluster, kind__in=owners).values_list("kind", flat=True))
    for kind in owners.keys() - existing:
        SyncState.objects.get_or_create(cluster=cluster, kind=kind)
    states = SyncState.objects.filter(cluster=cluster, kind__in=owners)
    if not force:
        states = states.filter(_claimable(owners, alive))
        if whole and states.count() < len(owners):
            return []
    owner_of = Case(*(When(kind=kind, then=Value(owner)) for kind, owner in owners.items()), default=F("watch_owner"))
    # A new holder has not connected yet: whatever the last one said (it may have died saying
    # "connected") no longer stands, and the watch counts as lost since the old lease ran out
    # (or from now, a stopped hub's lease taken before it ran out).
    states.exclude(watch_owner=owner_of).update(
        watch_connected=False,
        watch_lost_at=Coalesce(F("watch_lost_at"), Least(F("watch_lease_until"), Now()), Now()),
    )
    states.update(watch_owner=owner_of, watch_lease_until=_lease_expiry())
    taken = SyncState.objects.filter(cluster=cluster, kind__in=owners, watch_owner__in=owners.values())
    return sorted(kind for kind, owner in taken.values_list("kind", "watch_owner") if owners[kind] == owner)


def watch_leases_hand_over(cluster: Cluster, leases: dict[str, str], new_owner: Callable[[], str]) -> dict[str, str]:
    """Give each kind's lease still held by its token in `leases` a new token from `new_owner`
    (a hub takes the leases that ensure_watches claimed for a task under its own name); returns
    the kinds handed over, with their new tokens."""
    handed = {}
    for kind, owner in leases.items():
        token = new_owner()
        if SyncState.objects.filter(cluster=cluster, kind=kind, watch_owner=owner).update(watch_owner=token):
            handed[kind] = token
    return handed


def watch_lease_renew(cluster: Cluster, kind: str, *, owner: str) -> bool:
    """Extend `owner`'s lease; False when the lease is no longer theirs."""
    return (
        SyncState.objects.filter(cluster=cluster, kind=kind, watch_owner=owner).update(
            watch_lease_until=_lease_expiry()
        )
        == 1
    )


def watch_leases_renew(owners: Collection[str]) -> None:
    """Extend each lease of `owners` that is still theirs (owner tokens are unique: a few statements
    renew a whole hub's leases)."""
    ordered = sorted(owners)
    for start in range(0, len(ordered), 500):
        SyncState.objects.filter(watch_owner__in=ordered[start : start + 500]).update(watch_lease_until=_lease_expiry())


def _release(cluster_id: int, kind: str, owner: str) -> None:
    SyncState.objects.filter(cluster_id=cluster_id, kind=kind, watch_owner=owner).update(
        watch_owner="", watch_lease_until=None
    )


def watch_lease_release(cluster: Cluster, kind: str, *, owner: str) -> None:
    _release(cluster.pk, kind, owner)


@dataclass(frozen=True)
class WatchClaim:
    cluster_id: int
    kind: str
    owner: str


def watch_claim_release(claim: WatchClaim) -> None:
    """Give back a claimed lease whose watch will not be started."""
    _release(claim.cluster_id, claim.kind, claim.owner)


def live_clusters_count() -> int:
    return Cluster.objects.filter(source__in=live_source_keys()).count()


def watches_claim_idle(
    clusters: int | None = None, *, hub: str | None = None, alive: Collection[str] | None = None
) -> list[WatchClaim]:
    """Claim the leases of whole live clusters that nobody watches (of at most `clusters` of
    them): every kind of a cluster or none, so that no cluster is split between two holders.
    The caller starts a watch for each claim, which renews the lease from then on.

    A hub (`hub`, with `alive` the hubs that run) claims under its own name; it also takes the
    clusters of the hubs that no longer run (their leases not lapsed yet), and, beyond
    `clusters`, the kinds left idle of the clusters it holds."""
    mine: dict[int, set[str]] = {}
    busy = set()
    held = SyncState.objects.filter(watch_lease_until__gt=Now()).exclude(watch_owner="")
    for cluster_id, kind, owner in held.values_list("cluster_id", "kind", "watch_owner"):
        holder = owner_hub(owner)
        if hub is not None and holder == hub:
            mine.setdefault(cluster_id, set()).add(kind)
        elif holder is None or alive is None or holder in alive:
            busy.add(cluster_id)
    live = Cluster.objects.filter(source__in=live_source_keys()).exclude(pk__in=busy).order_by("pk")
    ids = list(live.values_list("pk", flat=True))
    repairs = [pk for pk in ids if pk in mine and len(mine[pk]) < len(Kind.values)]
    new = [pk for pk in ids if pk not in mine][:clusters]
    claims = []
    for cluster in Cluster.objects.filter(pk__in=repairs + new).order_by("pk"):
        owners = {kind: _new_owner(hub) for kind in Kind.values if kind not in mine.get(cluster.pk, ())}
        taken = watch_leases_claim(cluster, owners, whole=True, alive=alive)
        claims += [WatchClaim(cluster.pk, kind, owners[kind]) for kind in taken]
    return claims


def _new_owner(hub: str | None) -> str:
    return hub_owner(hub) if hub is not None else f"task:{uuid.uuid4().hex}"
