"""Prometheus metrics (/metrics), computed when Prometheus scrapes.

A collector reads the database (sync state, matrix builds, the patch audit log), so every web
process reports the same numbers whichever process did the work: no multiprocess mode, no
counters kept in memory. Label values are cluster and kind names, statuses and results: no
manifests, no credentials.

Who scrapes decides what is reported (access.scope): with METRICS_TOKEN, every cluster; a
local copy (DEBUG on, no token) reports what anonymous users read. A cluster appears only for
a scope that reads all of it, since every figure is a total over its namespaces. With DEBUG
off, /metrics answers nobody until METRICS_TOKEN is set.
"""

from __future__ import annotations

import hmac
import logging
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import datetime

from django.conf import settings
from django.db import Error as DatabaseError
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from access.scope import SYSTEM, Scope, anonymous_scope
from core.cache import VersionedCache
from core.db import database_now, one_snapshot
from inventory.models import Cluster, SyncState
from matrix.freshness import STATES, stored_freshness_of
from matrix.models import MatrixAudit, MatrixBuild, MatrixRow
from matrix.selectors import cell_status_counts, current_build
from patches.models import PatchAttempt
from policies.metrics import policy_families

logger = logging.getLogger(__name__)


# Cluster id -> its current build's cells by status, counted once per build generation (counting
# reads every row). The default bound is more clusters than a deployment registers: none is evicted.
_CELL_COUNTS: VersionedCache[tuple[object, ...], Counter[str]] = VersionedCache("metrics_cell_counts")


def _cell_counts(build: MatrixBuild) -> Counter[str]:
    # Counted over every row: only scopes that read the whole cluster get here.
    return _CELL_COUNTS.get(build.cluster_id, build.generation, lambda _stale: cell_status_counts(build, scope=SYSTEM))


def _sync_families(scope: Scope, now: datetime) -> Iterator[Metric]:
    labels = ["cluster", "kind"]
    info = GaugeMetricFamily("ome_cluster_info", "Registered clusters and their source.", labels=["cluster", "source"])
    lag = GaugeMetricFamily(
        "ome_sync_lag_seconds",
        "Seconds since the kind was last listed in full (+Inf: never). A connected watch applies changes in between.",
        labels=labels,
    )
    listed = GaugeMetricFamily("ome_sync_last_list_timestamp_seconds", "When the kind was last listed.", labels=labels)
    event = GaugeMetricFamily(
        "ome_sync_last_event_timestamp_seconds", "When a watch last applied an event.", labels=labels
    )
    error = GaugeMetricFamily("ome_sync_error", "1 while the last list or watch of the kind failed.", labels=labels)
    connected = GaugeMetricFamily(
        "ome_watch_connected", "1 while a watch of the kind is connected and its lease is renewed.", labels=labels
    )
    reconnects = CounterMetricFamily("ome_watch_reconnects", "Watch reconnects (errors, 410 relists).", labels=labels)
    objects = GaugeMetricFamily("ome_inventory_objects", "Objects stored for the kind.", labels=labels)
    invalid = GaugeMetricFamily(
        "ome_inventory_invalid_objects", "Stored objects that cannot be evaluated.", labels=labels
    )
    for cluster in Cluster.objects.filter(scope.q_whole("name")).order_by("name"):
        info.add_metric([cluster.name, cluster.source], 1)
    # Leases are judged by the database's clock, which set them (inventory.live.leases), read
    # once per scrape: the freshness families judge by the same instant.
    states = SyncState.objects.filter(scope.q_whole("cluster__name")).select_related("cluster")
    for state in states.order_by("cluster__name", "kind"):
        key = [state.cluster.name, state.kind]
        lag.add_metric(key, (now - state.last_list_at).total_seconds() if state.last_list_at else math.inf)
        if state.last_list_at:
            listed.add_metric(key, state.last_list_at.timestamp())
        if state.last_event_at:
            event.add_metric(key, state.last_event_at.timestamp())
        error.add_metric(key, 1 if state.last_error else 0)
        connected.add_metric(key, 1 if state.watch_live_at(now) else 0)
        reconnects.add_metric(key, state.watch_reconnects)
        objects.add_metric(key, state.count)
        invalid.add_metric(key, state.invalid)
    yield from (info, lag, listed, event, error, connected, reconnects, objects, invalid)


def _matrix_families(scope: Scope) -> Iterator[Metric]:
    duration = GaugeMetricFamily(
        "ome_matrix_build_duration_seconds",
        "How long the full recompute of the current matrix took.",
        labels=["cluster"],
    )
    finished = GaugeMetricFamily(
        "ome_matrix_build_finished_timestamp_seconds", "When the current matrix build finished.", labels=["cluster"]
    )
    updated = GaugeMetricFamily(
        "ome_matrix_updated_timestamp_seconds",
        "When the current matrix last changed (build or update).",
        labels=["cluster"],
    )
    running = GaugeMetricFamily(
        "ome_matrix_builds_running", "Builds started and not finished (a stale one was abandoned).", labels=["cluster"]
    )
    rows = GaugeMetricFamily("ome_matrix_rows", "Rows of the current matrix by outcome.", labels=["cluster", "outcome"])
    by_status = GaugeMetricFamily(
        "ome_matrix_cells", "Cells of the current matrix by status.", labels=["cluster", "status"]
    )
    running_counts = {
        entry["cluster__name"]: entry["n"]
        for entry in MatrixBuild.objects.filter(status=MatrixBuild.Status.RUNNING)
        .order_by()
        .values("cluster__name")
        .annotate(n=Count("pk"))
    }
    for cluster in Cluster.objects.filter(scope.q_whole("name")).order_by("name"):
        running.add_metric([cluster.name], running_counts.get(cluster.name, 0))
        build = current_build(cluster)
        if build is None:
            continue
        if build.duration_ms is not None:
            duration.add_metric([cluster.name], build.duration_ms / 1000)
        if build.finished_at is not None:
            finished.add_metric([cluster.name], build.finished_at.timestamp())
        last = max(t for t in (build.finished_at, build.updated_at, build.started_at) if t is not None)
        updated.add_metric([cluster.name], last.timestamp())
        outcomes = {
            entry["outcome"]: entry["n"]
            for entry in MatrixRow.objects.filter(build=build).order_by().values("outcome").annotate(n=Count("pk"))
        }
        for outcome in MatrixRow.Outcome.values:
            rows.add_metric([cluster.name, outcome], outcomes.get(outcome, 0))
        for status, count in sorted(_cell_counts(build).items()):
            by_status.add_metric([cluster.name, status], count)
    yield from (duration, finished, updated, running, rows, by_status)


def _matrix_check_families(scope: Scope) -> Iterator[Metric]:
    """How far each matrix is behind its inventory, and what the last audit found (matrix.audit)."""
    behind = GaugeMetricFamily(
        "ome_matrix_versions_behind",
        "Inventory versions since the matrix was last found level (0: every change is in it).",
        labels=["cluster"],
    )
    audited = GaugeMetricFamily(
        "ome_matrix_audit_timestamp_seconds", "When the matrix was last audited.", labels=["cluster"]
    )
    checked = GaugeMetricFamily("ome_matrix_audit_rows_checked", "Rows the last audit recomputed.", labels=["cluster"])
    differing = GaugeMetricFamily(
        "ome_matrix_audit_rows_differing",
        "Rows the last audit found wrong (and repaired); anything above 0 is a defect.",
        labels=["cluster"],
    )
    for cluster in Cluster.objects.filter(scope.q_whole("name")).order_by("name"):
        build = current_build(cluster)
        if build is not None:
            behind.add_metric([cluster.name], max(0, cluster.inventory_version - build.applied_version))
        audit = MatrixAudit.objects.filter(cluster=cluster).first()
        if audit is not None:
            audited.add_metric([cluster.name], audit.audited_at.timestamp())
            checked.add_metric([cluster.name], audit.rows_checked)
            differing.add_metric([cluster.name], audit.rows_differing)
    yield from (behind, audited, checked, differing)


def _freshness_families(scope: Scope, now: datetime) -> Iterator[Metric]:
    """matrix.freshness, as a state set (1 for the cluster's state, 0 for the others)."""
    state = GaugeMetricFamily(
        "ome_cluster_freshness",
        "1 for the cluster's freshness state (live, lagging, stale, unknown), 0 for the others.",
        labels=["cluster", "state"],
    )
    stale = GaugeMetricFamily(
        "ome_cluster_stale_seconds", "Seconds the cluster has been stale (0 when it is not).", labels=["cluster"]
    )
    clusters = Cluster.objects.filter(scope.q_whole("name")).order_by("name")
    # From the database alone: the scrape's snapshot is a transaction, and no state here asks Redis.
    for name, freshness in stored_freshness_of(clusters, now=now).items():
        for candidate in STATES:
            state.add_metric([name, candidate], 1 if freshness.state == candidate else 0)
        stale.add_metric([name], freshness.stale_seconds())
    yield from (state, stale)


def _patch_families(scope: Scope) -> Iterator[Metric]:
    attempts = CounterMetricFamily(
        "ome_patch_attempts", "Pipeline patches applied, by outcome (the audit log).", labels=["cluster", "result"]
    )
    attempts_seen = PatchAttempt.objects.filter(scope.q_whole("cluster_name"))
    grouped = attempts_seen.order_by().values("cluster_name", "result").annotate(n=Count("pk"))
    for entry in sorted(grouped, key=lambda e: (e["cluster_name"], e["result"])):
        attempts.add_metric([entry["cluster_name"], entry["result"]], entry["n"])
    yield attempts


class DatabaseCollector(Collector):
    """Reads the numbers from the database at each scrape, of the clusters `scope` reads whole."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("ome_metrics_database_up", "1 when the database answered this scrape.")
        try:
            families = list(self._families())
        except DatabaseError as error:
            logger.warning("metrics: the database did not answer: %s", type(error).__name__)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from families

    def _families(self) -> Iterable[Metric]:
        # One snapshot and one database time: a watch is never "connected" in a scrape that calls
        # its cluster stale.
        with one_snapshot():
            now = database_now()
            yield from _sync_families(self.scope, now)
            yield from _matrix_families(self.scope)
            yield from _matrix_check_families(self.scope)
            yield from _freshness_families(self.scope, now)
            yield from _patch_families(self.scope)
            yield from policy_families(self.scope)


def registry_for(scope: Scope) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector(scope))
    return registry


def metrics_scope(request: HttpRequest) -> Scope | None:
    """SYSTEM for the bearer METRICS_TOKEN; without a token configured, what anonymous users
    read while DEBUG is on; None (refused) otherwise."""
    if not settings.METRICS_TOKEN:
        return anonymous_scope() if settings.DEBUG else None
    return SYSTEM if bears_metrics_token(request) else None


def bears_metrics_token(request: HttpRequest) -> bool:
    """Whether the request carries `Authorization: Bearer <METRICS_TOKEN>` (never without one set)."""
    token = str(getattr(settings, "METRICS_TOKEN", "") or "")
    sent = request.headers.get("Authorization", "")
    return bool(token) and hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    """The Prometheus text format. With METRICS_TOKEN set, only for `Authorization: Bearer <it>`;
    with DEBUG off and no METRICS_TOKEN, for nobody."""
    scope = metrics_scope(request)
    if scope is None:
        text = "metrics need the bearer token\n" if settings.METRICS_TOKEN else "set METRICS_TOKEN to scrape metrics\n"
        response = HttpResponse(text, status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(generate_latest(registry_for(scope)), content_type=CONTENT_TYPE_LATEST)
