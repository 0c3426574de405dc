"""How current what the dashboard shows of each cluster is: the one home of that judgement.

Every surface that shows verdicts (the page banner, the API envelopes, /metrics, /readyz) reads
`freshness_of`, so none of them can call a cluster current while another calls it stale:

- `live`: every kind of a live cluster is watched by a holder that renews its lease, no watch
  reports an error, and the matrix holds every inventory change stored. What it does not claim:
  that a change made in the cluster a moment ago is stored already. A watch stores a change as
  its batch commits, within seconds on a quiet machine; under a burst on a busy one the
  inventory trails the cluster by what docs/operations.md ("What faults cost") measured;
- `lagging`: the same, but the matrix is some inventory versions behind, for less than
  MATRIX_LAG_STALE_AFTER seconds: an update is on its way (queued or running, matrix.pending),
  or, behind for longer than UPDATE_LOST_AFTER with none, it was lost (a worker or Redis died
  with it) and the periodic catch-up levels it;
- `stale`: something stops changes from reaching the page, since when and why: the watch of a
  kind is lost, the cluster is unreachable, the worker holding the watches is down (its lease ran
  out while it still said "connected"), or the matrix has been behind for too long;
- `unknown`: nothing to judge yet (a live cluster never listed, or no matrix yet).

A manifest snapshot has no watch: it is as current as its matrix. The API's answers carry it
as `freshness` (web.api.freshness).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Min
from django.db.models.functions import Now
from django.utils import timezone

from inventory.models import Cluster, Kind, Resource, SyncState

from . import pending
from .models import MatrixBuild

# An update is queued the moment a change commits (matrix.pending): a cluster behind for longer
# than this with none queued nor running lost its update.
UPDATE_LOST_AFTER = 10.0

WATCH_LOST, UNREACHABLE, WORKER_DOWN, MATRIX_BEHIND = (
    "watch lost",
    "cluster unreachable",
    "worker down",
    "matrix behind",
)

LIVE, LAGGING, STALE, UNKNOWN = "live", "lagging", "stale", "unknown"
STATES = (LIVE, LAGGING, STALE, UNKNOWN)


@dataclass(frozen=True, slots=True)
class Freshness:
    """One cluster's freshness at `checked_at`. `since`: when it became stale (or started to
    lag); `reasons`: why, one line each, naming the kinds; `versions_behind`: inventory changes
    the matrix does not hold yet."""

    cluster: str
    state: str
    checked_at: datetime
    since: datetime | None = None
    reasons: tuple[str, ...] = ()
    versions_behind: int = 0
    update_lost: bool = False  # lagging, with no update queued nor running for it

    @property
    def current(self) -> bool:
        return self.state == LIVE

    def stale_seconds(self) -> float:
        """How long the cluster has been stale (0 when it is not)."""
        if self.state != STALE or self.since is None:
            return 0.0
        return max(0.0, (self.checked_at - self.since).total_seconds())

    def summary(self) -> str:
        """One line for people: the state, by how much or since when, and why."""
        text = {
            LIVE: "live: every change stored is shown",
            LAGGING: f"lagging: the matrix is {self.versions_behind} inventory change(s) behind"
            + ("; its update was lost, the catch-up will level it" if self.update_lost else ""),
            STALE: "stale",
            UNKNOWN: "unknown",
        }[self.state]
        if self.state in (STALE, UNKNOWN) and self.reasons:
            text += ": " + "; ".join(self.reasons)
        return text

    def identity(self) -> tuple[object, ...]:
        """What a cached page that shows this freshness depends on (not when it was checked)."""
        return (self.state, self.since, self.reasons, self.versions_behind, self.update_lost)

    def to_dict(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "since": self.since.isoformat() if self.since else None,
            "reasons": list(self.reasons),
            "versions_behind": self.versions_behind,
        }


@dataclass(frozen=True, slots=True)
class _Finding:
    reason: str
    since: datetime | None


def _kind_findings(state: SyncState, now: datetime) -> list[_Finding]:
    """Why one kind's watch does not bring changes in (nothing while it does)."""
    if state.watch_live_at(now):
        return []
    if state.watch_connected and state.watch_lease_until is not None:
        # The holder said "connected" and stopped renewing: it died without a word.
        return [_Finding(f"{WORKER_DOWN} ({state.kind}: lease ran out)", state.watch_lease_until)]
    since = state.watch_lost_at or state.last_list_at
    if state.last_error:
        return [_Finding(f"{UNREACHABLE} ({state.kind}: {state.last_error[:200]})", since or state.last_error_at)]
    return [_Finding(f"{WATCH_LOST} ({state.kind})", since)]


def _sync_findings(states: Sequence[SyncState], now: datetime) -> list[_Finding] | None:
    """The findings of a live cluster's kinds; None when a kind was never listed, nor failed
    (nothing is known yet)."""
    by_kind = {state.kind: state for state in states}
    findings = [finding for state in states for finding in _kind_findings(state, now)]
    never = [kind for kind in Kind.values if kind not in by_kind or by_kind[kind].last_list_at is None]
    if never and not any(state.last_error for state in states):
        return None
    return findings


def _behind_since(cluster: Cluster, build: MatrixBuild) -> datetime | None:
    """When the oldest change the matrix lacks was stored (the build's last write when only
    removals are missing, which leave no row behind). `changed_at`, not `last_seen`: an
    unchanged event must not re-date the lag."""
    oldest = Resource.objects.filter(cluster=cluster, version__gt=build.applied_version).aggregate(
        oldest=Min("changed_at")
    )["oldest"]
    return oldest or build.updated_at or build.finished_at


def _judge(cluster: Cluster, states: Sequence[SyncState], build: MatrixBuild | None, now: datetime) -> Freshness:
    findings: list[_Finding] = []
    if cluster.is_live:
        sync = _sync_findings(states, now)
        if sync is None:
            return Freshness(cluster.name, UNKNOWN, now, reasons=("never listed",))
        findings = sync
    if build is None:
        return Freshness(cluster.name, UNKNOWN, now, reasons=("no matrix yet",))
    behind = max(0, cluster.inventory_version - build.applied_version)
    lag_since = _behind_since(cluster, build) if behind else None
    lag_limit = timedelta(seconds=settings.MATRIX_LAG_STALE_AFTER)
    if lag_since is not None and now - lag_since > lag_limit:
        findings.append(_Finding(f"{MATRIX_BEHIND} ({behind} inventory changes)", lag_since))
    if findings:
        known = [finding.since for finding in findings if finding.since is not None]
        reasons = tuple(dict.fromkeys(finding.reason for finding in findings))
        return Freshness(cluster.name, STALE, now, min(known, default=None), reasons, behind)
    if behind:
        return Freshness(cluster.name, LAGGING, now, lag_since, (), behind)
    return Freshness(cluster.name, LIVE, now)


def _current_builds(clusters: Sequence[Cluster]) -> dict[int, MatrixBuild]:
    """Each cluster's newest succeeded build (matrix.selectors.current_build, for many)."""
    builds: dict[int, MatrixBuild] = {}
    succeeded = MatrixBuild.objects.filter(cluster__in=[c.pk for c in clusters], status=MatrixBuild.Status.SUCCEEDED)
    for build in succeeded.order_by("cluster_id", "-finished_at", "-pk").defer("error"):
        builds.setdefault(build.cluster_id, build)
    return builds


def freshness_of(
    clusters: Iterable[Cluster], *, now: datetime | None = None, builds: Mapping[int, MatrixBuild] | None = None
) -> dict[str, Freshness]:
    """The freshness of each cluster by name (see stored_freshness_of), a lagging one's
    `update_lost` included: one Redis round trip when some cluster lags for long."""
    chosen = list(clusters)
    return _with_lost_updates(chosen, stored_freshness_of(chosen, now=now, builds=builds))


def stored_freshness_of(
    clusters: Iterable[Cluster], *, now: datetime | None = None, builds: Mapping[int, MatrixBuild] | None = None
) -> dict[str, Freshness]:
    """The freshness of each cluster by name, from the database alone (`update_lost` is not
    known: it asks Redis), so it can be read in a transaction without waiting on the broker: in
    two queries plus one per lagging cluster (one fewer when the caller gives each cluster's
    current build, by cluster id; none for sync states when no cluster is live). The caller
    chooses the clusters (a reader's scope, or every cluster for the system), read just before:
    their `inventory_version` is compared with the matrix's. Leases are judged by the
    database's clock, which set them (inventory.live.leases), read with the sync states."""
    chosen = list(clusters)
    states: dict[int, list[SyncState]] = {}
    live = [c.pk for c in chosen if c.is_live]
    rows = SyncState.objects.filter(cluster__in=live).defer("rejected").annotate(database_now=Now()) if live else ()
    for state in rows:
        states.setdefault(state.cluster_id, []).append(state)
        now = now or state.database_now
    now = now or timezone.now()  # no sync state: no lease to judge
    builds = _current_builds(chosen) if builds is None else builds
    return {c.name: _judge(c, states.get(c.pk, []), builds.get(c.pk), now) for c in chosen}


def _with_lost_updates(clusters: list[Cluster], judged: dict[str, Freshness]) -> dict[str, Freshness]:
    """Mark the clusters lagging for longer than UPDATE_LOST_AFTER whose update is neither queued
    nor running (one Redis round trip, only when some cluster lags that long)."""
    overdue = [
        c.pk
        for c in clusters
        if (f := judged[c.name]).state == LAGGING
        and f.since is not None
        and (f.checked_at - f.since).total_seconds() > UPDATE_LOST_AFTER
    ]
    on_their_way = pending.updates_on_their_way(overdue) if overdue else set()
    if on_their_way is None:  # Redis cannot say: nothing is called lost
        return judged
    for c in clusters:
        if c.pk in overdue and c.pk not in on_their_way:
            judged[c.name] = dataclasses.replace(judged[c.name], update_lost=True)
    return judged


def cluster_freshness(cluster: Cluster, *, now: datetime | None = None, build: MatrixBuild | None = None) -> Freshness:
    """The freshness of one cluster (see freshness_of); `build`: its current build, when read already."""
    return freshness_of([cluster], now=now, builds=None if build is None else {cluster.pk: build})[cluster.name]


def cluster_freshness_data(cluster: Cluster) -> dict[str, Any]:
    """The freshness of one cluster as the API answers it (web.api.freshness.FreshnessSerializer)."""
    return cluster_freshness(cluster).to_dict()
