"""Watch leases: one watcher per kind, renewed while it watches, taken over once it lapses.

Lease times are the database's clock (`Now()` in the statements), never a process's: a worker
whose clock is skewed can neither keep a lease past its time nor take one that has not run out.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Case, Count, DateTimeField, ExpressionWrapper, F, Q, Value, When
from django.db.models.functions import Coalesce, Now

from core.db import retried_transaction

from ..locks import cluster_write_lock
from ..models import Cluster, Kind, SyncState


def _lease_expiry() -> ExpressionWrapper:
    """One lease from now, by the database's clock."""
    return ExpressionWrapper(Now() + timedelta(seconds=settings.OME_WATCH_LEASE), output_field=DateTimeField())


def watch_lease_claim(cluster: Cluster, kind: str, *, owner: str, force: bool = False) -> bool:
    """Take the watch lease of one kind for `owner`, unless someone else holds a live one
    (`force` takes it anyway; the holder notices when it next renews, and stops)."""
    return watch_leases_claim(cluster, {kind: owner}, force=force) == [kind]


@retried_transaction
def watch_leases_claim(cluster: Cluster, owners: dict[str, str], *, force: bool = False) -> list[str]:
    """Take the watch lease of each kind of `owners` for its owner, and return the kinds taken.
    One transaction, after the cluster's write lock (inventory.locks, the writers' one order):
    two claimers of the same cluster's kinds queue, so they do not split them between them
    (the second finds them all taken), and a failed claim leaves the states as they were."""
    with transaction.atomic():
        cluster_write_lock(cluster.pk)
        return _claim(cluster, owners, force=force)


def _claim(cluster: Cluster, owners: dict[str, str], *, force: bool) -> list[str]:
    existing = set(SyncState.objects.filter(cluster=cluster, kind__in=owners).values_list("kind", flat=True))
    for kind in owners.keys() - existing:
        SyncState.objects.get_or_create(cluster=cluster, kind=kind)
    states = SyncState.objects.filter(cluster=cluster, kind__in=owners)
    if not force:
        states = states.filter(Q(watch_owner="") | Q(watch_lease_until__isnull=True) | Q(watch_lease_until__lte=Now()))
        states = states | SyncState.objects.filter(
            cluster=cluster, kind__in=owners, watch_owner__in=owners.values()
        )  # a holder claims its own lease again
    owner_of = Case(*(When(kind=kind, then=Value(owner)) for kind, owner in owners.items()), default=F("watch_owner"))
    # A new holder has not connected yet: whatever the last one said (it may have died saying
    # "connected") no longer stands, and the watch counts as lost since the old lease ran out.
    states.exclude(watch_owner=owner_of).update(
        watch_connected=False,
        watch_lost_at=Coalesce(F("watch_lost_at"), F("watch_lease_until"), Now()),
    )
    states.update(watch_owner=owner_of, watch_lease_until=_lease_expiry())
    taken = SyncState.objects.filter(cluster=cluster, kind__in=owners, watch_owner__in=owners.values())
    return sorted(kind for kind, owner in taken.values_list("kind", "watch_owner") if owners[kind] == owner)


def watch_lease_renew(cluster: Cluster, kind: str, *, owner: str) -> bool:
    """Extend `owner`'s lease; False when the lease is no longer theirs."""
    return (
        SyncState.objects.filter(cluster=cluster, kind=kind, watch_owner=owner).update(
            watch_lease_until=_lease_expiry()
        )
        == 1
    )


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
    return Cluster.objects.exclude(source=Cluster.Source.MANIFESTS).count()


def watches_claim_idle(clusters: int | None = None) -> list[WatchClaim]:
    """Claim the lease of every kind that nobody watches, of every live cluster (or of at most
    `clusters` of them); the caller starts a watch for each claim, which renews the lease from
    then on."""
    fully_leased = (
        SyncState.objects.filter(watch_lease_until__gt=Now())
        .exclude(watch_owner="")
        .values("cluster_id")
        .annotate(leased=Count("pk"))
        .filter(leased__gte=len(Kind.values))
        .values("cluster_id")
    )
    idle = Cluster.objects.exclude(source=Cluster.Source.MANIFESTS).exclude(pk__in=fully_leased).order_by("pk")
    claims = []
    for cluster in idle if clusters is None else idle[:clusters]:
        owners = {kind: f"task:{uuid.uuid4().hex}" for kind in Kind.values}
        claims += [WatchClaim(cluster.pk, kind, owners[kind]) for kind in watch_leases_claim(cluster, owners)]
    return claims
