"""Operations: liveness (/healthz), readiness (/readyz), Prometheus metrics (/metrics), and log
formatters that write JSON lines and blank out secrets.

The probe views are answered by `ProbeMiddleware`, first in MIDDLEWARE: kubelet and Prometheus
call the pod by its IP over plain HTTP, which ALLOWED_HOSTS and SECURE_SSL_REDIRECT would refuse.

Metrics are computed when Prometheus scrapes, by a collector that reads the database (sync state,
matrix builds, the patch audit log), so every web process reports the same numbers whichever
process did the work; no multiprocess mode, no counters kept in memory.

Nothing here imports models at module level: LOGGING loads the formatters before the apps.
"""

from __future__ import annotations

import hmac
import json
import logging
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db import Error as DatabaseError
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import path
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

logger = logging.getLogger(__name__)

# ---- logs ------------------------------------------------------------------------------------

# What a secret looks like in a log line, and the part of it that stays. Tokens come from
# kubeconfigs and service accounts, passwords from DATABASE_URL / REDIS_URL.
_SECRET_PATTERNS = [
    (re.compile(r"(?i)(\bbearer\s+)[^\s'\",;]+"), r"\1[redacted]"),
    (
        re.compile(
            r"(?i)(\b(?:token|password|passwd|secret|api[_-]?key|client-key-data|client-certificate-data)[\"']?\s*[:=]\s*[\"']?)[^\s'\",;}]+"
        ),
        r"\1[redacted]",
    ),
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@/\s]+@"), r"\1[redacted]@"),
]


def redact(text: str) -> str:
    """`text` with bearer tokens, `token: ...`/`password=...` values and URL passwords blanked."""
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


class RedactingFormatter(logging.Formatter):
    """logging.Formatter whose output (message, arguments and traceback) has secrets blanked."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


# Attributes every LogRecord has; anything else was passed with `extra=` and goes into the JSON.
_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, the `extra=`
    fields, and the traceback as `exc_info`. Secrets are blanked as in RedactingFormatter."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
            "process": record.process,
            "thread": record.threadName,
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                entry[key] = value if isinstance(value, str | int | float | bool | type(None)) else redact(repr(value))
        if record.exc_info:
            entry["exc_info"] = redact(self.formatException(record.exc_info))
        if record.stack_info:
            entry["stack_info"] = redact(self.formatStack(record.stack_info))
        return json.dumps(entry, ensure_ascii=False, default=str)


# ---- liveness and readiness -------------------------------------------------------------------

CHECKS = ("database", "broker", "sync")


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    # Liveness only: answers without touching the database or Redis, so a slow dependency
    # does not get the web process restarted.
    return JsonResponse({"status": "ok"})


def _timed(check: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    result = check()
    result["ms"] = round((time.perf_counter() - started) * 1000, 1)
    return result


def check_database() -> dict[str, Any]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as error:
        # The class name only: a driver's message may name hosts and users; the log has the rest.
        logger.warning("readiness: database check failed: %s", error)
        return {"status": "fail", "error": type(error).__name__}
    return {"status": "ok"}


def check_broker() -> dict[str, Any]:
    url = str(settings.CELERY_BROKER_URL)
    if not url.startswith(("redis://", "rediss://", "unix://")):
        return {"status": "skipped", "detail": "not a Redis broker"}
    import redis

    client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
    try:
        client.ping()
    except (redis.RedisError, OSError) as error:
        logger.warning("readiness: broker check failed: %s", type(error).__name__)
        return {"status": "fail", "error": type(error).__name__}
    finally:
        client.close()
    return {"status": "ok"}


def _sync_ages(now: datetime) -> dict[str, dict[str, Any]]:
    """Per live cluster: seconds since its least recently listed kind was listed (None: a kind
    was never listed), and the kinds whose last sync failed."""
    from inventory.models import Cluster, Kind, SyncState

    clusters: dict[str, dict[str, Any]] = {}
    live = Cluster.objects.exclude(source=Cluster.Source.MANIFESTS).order_by("name")
    listed: dict[tuple[int, str], datetime | None] = {}
    failing: dict[int, list[str]] = {}
    for state in SyncState.objects.filter(cluster__in=live).only("cluster_id", "kind", "last_list_at", "last_error"):
        listed[(state.cluster_id, state.kind)] = state.last_list_at
        if state.last_error:
            failing.setdefault(state.cluster_id, []).append(state.kind)
    for cluster in live:
        times = [listed.get((cluster.pk, kind)) for kind in Kind.values]
        oldest = None if any(t is None for t in times) else min(t for t in times if t is not None)
        clusters[cluster.name] = {
            "age_seconds": None if oldest is None else round((now - oldest).total_seconds(), 1),
            "failing_kinds": sorted(failing.get(cluster.pk, [])),
        }
    return clusters


def check_sync() -> dict[str, Any]:
    """Live clusters whose least recently listed kind is older than OME_READY_SYNC_MAX_AGE (or
    never listed) are stale. Manifest snapshots are loaded on request only and are not judged."""
    from django.utils import timezone

    threshold = int(settings.OME_READY_SYNC_MAX_AGE)
    try:
        clusters = _sync_ages(timezone.now())
    except DatabaseError as error:
        return {"status": "fail", "error": type(error).__name__}
    for entry in clusters.values():
        age = entry["age_seconds"]
        entry["status"] = "never" if age is None else ("ok" if age <= threshold else "stale")
    stale = sorted(name for name, entry in clusters.items() if entry["status"] != "ok")
    result: dict[str, Any] = {"status": "fail" if stale else "ok", "threshold_seconds": threshold, "clusters": clusters}
    if stale:
        result["stale"] = stale
    return result


_CHECK_FUNCTIONS: dict[str, Callable[[], dict[str, Any]]] = {
    "database": check_database,
    "broker": check_broker,
    "sync": check_sync,
}


@never_cache
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    """Every check with its result. 503 when a check named in OME_READY_REQUIRE fails; a failing
    check that is not required makes the status `degraded` (200): the web still serves what it
    has, e.g. the last matrix while Redis or a cluster's API server is down."""
    required = {name.strip() for name in settings.OME_READY_REQUIRE if name.strip()}
    checks = {name: _timed(function) for name, function in _CHECK_FUNCTIONS.items()}
    failed = {name for name, result in checks.items() if result["status"] == "fail"}
    for name, result in checks.items():
        result["required"] = name in required
    status = "fail" if failed & required else ("degraded" if failed else "ok")
    return JsonResponse({"status": status, "checks": checks}, status=503 if status == "fail" else 200)


# ---- metrics ----------------------------------------------------------------------------------


def _timestamp(value: datetime | None) -> float | None:
    return value.timestamp() if value is not None else None


class _CellCounts:
    """Cells of a build by status, computed once per build generation (a full build or an
    incremental update gives a new one): counting means reading every row's runtime lists."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[int, tuple[tuple[Any, ...], Counter[str]]] = {}

    def get(self, build: Any) -> Counter[str]:
        key = (build.pk, build.finished_at, build.updated_at, build.rows_count)
        with self._lock:
            cached = self._cache.get(build.cluster_id)
        if cached is not None and cached[0] == key:
            return cached[1]
        counts = self._count(build)
        with self._lock:
            self._cache[build.cluster_id] = (key, counts)
        return counts

    @staticmethod
    def _count(build: Any) -> Counter[str]:
        from matrix.models import CellStatus, MatrixRow
        from matrix.rows import row_statuses
        from matrix.selectors import runtimes_in_scope

        scopes: dict[str, tuple[frozenset[tuple[str, str, str]], frozenset[tuple[str, str, str]]]] = {}
        counts: Counter[str] = Counter(dict.fromkeys(CellStatus.values, 0))
        rows = MatrixRow.objects.filter(build=build).values_list("namespace", "compatible", "manual")
        for namespace, compatible, manual in rows.iterator(chunk_size=2000):
            if namespace not in scopes:
                heads = runtimes_in_scope(build.cluster, namespace).values_list("kind", "namespace", "name", "disabled")
                keys = frozenset((kind, ns, name) for kind, ns, name, _ in heads)
                scopes[namespace] = (
                    keys,
                    frozenset((kind, ns, name) for kind, ns, name, disabled in heads if disabled),
                )
            keys, disabled = scopes[namespace]
            listed = {key: status for key, status in row_statuses(compatible, manual).items() if key in keys}
            counts.update(listed.values())
            unlisted_disabled = sum(1 for key in disabled if key not in listed)
            counts[str(CellStatus.DISABLED)] += unlisted_disabled
            counts[str(CellStatus.EXCLUDED)] += len(keys) - len(listed) - unlisted_disabled
        return counts


class DatabaseCollector(Collector):
    """Reads the numbers from the database at each scrape. Label values are cluster and kind
    names, statuses and results: no manifests, no credentials."""

    def __init__(self) -> None:
        self.cells = _CellCounts()

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
        yield from self._sync_families()
        yield from self._matrix_families()
        yield from self._patch_families()

    def _sync_families(self) -> Iterator[Metric]:
        from django.utils import timezone

        from inventory.models import Cluster, SyncState

        labels = ["cluster", "kind"]
        info = GaugeMetricFamily(
            "ome_cluster_info", "Registered clusters and their source.", labels=["cluster", "source"]
        )
        lag = GaugeMetricFamily(
            "ome_sync_lag_seconds",
            "Seconds since the kind was last listed in full (+Inf: never). A connected watch applies changes in between.",
            labels=labels,
        )
        listed = GaugeMetricFamily(
            "ome_sync_last_list_timestamp_seconds", "When the kind was last listed.", labels=labels
        )
        event = GaugeMetricFamily(
            "ome_sync_last_event_timestamp_seconds", "When a watch last applied an event.", labels=labels
        )
        error = GaugeMetricFamily("ome_sync_error", "1 while the last list or watch of the kind failed.", labels=labels)
        connected = GaugeMetricFamily("ome_watch_connected", "1 while a watch of the kind is connected.", labels=labels)
        reconnects = CounterMetricFamily(
            "ome_watch_reconnects", "Watch reconnects (errors, 410 relists).", labels=labels
        )
        objects = GaugeMetricFamily("ome_inventory_objects", "Objects stored for the kind.", labels=labels)
        invalid = GaugeMetricFamily(
            "ome_inventory_invalid_objects", "Stored objects that cannot be evaluated.", labels=labels
        )
        now = timezone.now()
        for cluster in Cluster.objects.order_by("name"):
            info.add_metric([cluster.name, cluster.source], 1)
        states = SyncState.objects.select_related("cluster").order_by("cluster__name", "kind")
        for state in states:
            key = [state.cluster.name, state.kind]
            lag.add_metric(key, (now - state.last_list_at).total_seconds() if state.last_list_at else math.inf)
            if state.last_list_at:
                listed.add_metric(key, state.last_list_at.timestamp())
            if state.last_event_at:
                event.add_metric(key, state.last_event_at.timestamp())
            error.add_metric(key, 1 if state.last_error else 0)
            connected.add_metric(key, 1 if state.watch_connected else 0)
            reconnects.add_metric(key, state.watch_reconnects)
            objects.add_metric(key, state.count)
            invalid.add_metric(key, state.invalid)
        yield from (info, lag, listed, event, error, connected, reconnects, objects, invalid)

    def _matrix_families(self) -> Iterator[Metric]:
        from django.db.models import Count

        from inventory.models import Cluster
        from matrix.models import MatrixBuild, MatrixRow
        from matrix.services import current_build

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
            "ome_matrix_builds_running",
            "Builds started and not finished (a stale one was abandoned).",
            labels=["cluster"],
        )
        rows = GaugeMetricFamily(
            "ome_matrix_rows", "Rows of the current matrix by outcome.", labels=["cluster", "outcome"]
        )
        cells = GaugeMetricFamily(
            "ome_matrix_cells", "Cells of the current matrix by status.", labels=["cluster", "status"]
        )
        running_counts = {
            entry["cluster__name"]: entry["n"]
            for entry in MatrixBuild.objects.filter(status=MatrixBuild.Status.RUNNING)
            .order_by()
            .values("cluster__name")
            .annotate(n=Count("pk"))
        }
        for cluster in Cluster.objects.order_by("name"):
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
            for status, count in sorted(self.cells.get(build).items()):
                cells.add_metric([cluster.name, status], count)
        yield from (duration, finished, updated, running, rows, cells)

    def _patch_families(self) -> Iterator[Metric]:
        from django.db.models import Count

        from patches.models import PatchAttempt

        attempts = CounterMetricFamily(
            "ome_patch_attempts", "Pipeline patches applied, by outcome (the audit log).", labels=["cluster", "result"]
        )
        grouped = PatchAttempt.objects.order_by().values("cluster_name", "result").annotate(n=Count("pk"))
        for entry in sorted(grouped, key=lambda e: (e["cluster_name"], e["result"])):
            attempts.add_metric([entry["cluster_name"], entry["result"]], entry["n"])
        yield attempts


REGISTRY = CollectorRegistry(auto_describe=False)
REGISTRY.register(DatabaseCollector())


def _metrics_allowed(request: HttpRequest) -> bool:
    token = str(getattr(settings, "METRICS_TOKEN", "") or "")
    if not token:
        return True
    sent = request.headers.get("Authorization", "")
    return hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())


@never_cache
@require_safe
def metrics(request: HttpRequest) -> HttpResponse:
    """The Prometheus text format. With METRICS_TOKEN set, only for `Authorization: Bearer <it>`."""
    if not _metrics_allowed(request):
        response = HttpResponse("metrics need the bearer token\n", status=401, content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)


# ---- probes before the host check ---------------------------------------------------------------

PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {"/healthz": healthz, "/readyz": readyz, "/metrics": metrics}


class ProbeMiddleware:
    """Answers the probe paths itself, before SecurityMiddleware's HTTPS redirect and before
    anything asks for the (validated) host. Every other request goes on unchanged."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = PROBES.get(request.path_info)
        if view is not None:
            return view(request)
        return self.get_response(request)


# ---- request size ---------------------------------------------------------------------------


class RequestSizeLimitMiddleware:
    """Refuses a request whose body is larger than REQUEST_MAX_BYTES (413, saying so) before
    anything reads it: Django stores file uploads of any size on disk otherwise, and DRF reads
    JSON bodies whole. The largest legitimate body is a what-if's manifests (1 MiB by default)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = int(settings.REQUEST_MAX_BYTES)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            detail = f"the request body is larger than {limit // 1024} KiB (REQUEST_MAX_BYTES)"
            if request.path_info.startswith("/api/"):
                return JsonResponse({"detail": detail, "code": "request_too_large", "field": None}, status=413)
            return HttpResponse(f"{detail}\n", status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


# Included by ome_dashboard.urls, so that the probes also resolve (and reverse) like any page.
urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics, name="metrics"),
]
