"""Watch leases: one watcher per kind, renewed while it watches, taken over once it lapses.

Lease times are the database's clock (`Now()` in the statements), never a process's: a worker
whose clock is skewed can neither keep a lease past its time nor take one that has not run out.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import DateTimeField, ExpressionWrapper, F, Q
from django.db.models.functions import Coalesce, Now

from ..models import Cluster, Kind, SyncState


def _lease_expiry() -> ExpressionWrapper:
    """One lease from now, by the database's clock."""
    return ExpressionWrapper(Now() + timedelta(seconds=settings.OME_WATCH_LEASE), output_field=DateTimeField())


def watch_lease_claim(cluster: Cluster, kind: str, *, owner: str, force: bool = False) -> bool:
    """Take the watch lease of one kind for `owner`, unless someone else holds a live one
    (`force` takes it anyway; the holder notices when it next renews, and stops)."""
    SyncState.objects.get_or_create(cluster=cluster, kind=kind)
    states = SyncState.objects.filter(cluster=cluster, kind=kind)
    if not force:
        states = states.filter(
            Q(watch_owner="")
            | Q(watch_owner=owner)
            | Q(watch_lease_until__isnull=True)
            | Q(watch_lease_until__lte=Now())
        )
    taken = states.exclude(watch_owner=owner)
    # A new holder has not connected yet: whatever the last one said (it may have died saying
    # "connected") no longer stands, and the watch counts as lost since the old lease ran out.
    taken.update(
        watch_connected=False,
        watch_lost_at=Coalesce(F("watch_lost_at"), F("watch_lease_until"), Now()),
    )
    return states.update(watch_owner=owner, watch_lease_until=_lease_expiry()) == 1


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


def watches_claim_idle() -> list[WatchClaim]:
    """Claim the lease of every kind of every live cluster that nobody watches; the caller
    starts a watch for each claim, which renews the lease from then on."""
    claims = []
    for cluster in Cluster.objects.exclude(source=Cluster.Source.MANIFESTS):
        for kind in Kind.values:
            owner = f"task:{uuid.uuid4().hex}"
            if watch_lease_claim(cluster, kind, owner=owner):
                claims.append(WatchClaim(cluster.pk, kind, owner))
    return claims
