"""Liveness (/healthz) and readiness (/readyz): the checks and their views."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib import auth
from django.db import Error as DatabaseError
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from inventory.models import Cluster, Kind, SyncState
from inventory.sources import live_source_keys
from matrix.freshness import freshness_of

from .metrics import metrics_scope

logger = logging.getLogger(__name__)


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
    clusters: dict[str, dict[str, Any]] = {}
    live = Cluster.objects.filter(source__in=live_source_keys()).order_by("name")
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


def check_freshness() -> dict[str, Any]:
    """Fails when a cluster has been stale (matrix.freshness) for longer than
    OME_READY_STALE_AFTER seconds; names each cluster that is not live, with its reasons."""
    threshold = int(settings.OME_READY_STALE_AFTER)
    try:
        judged = freshness_of(Cluster.objects.order_by("name"))
    except DatabaseError as error:
        return {"status": "fail", "error": type(error).__name__}
    clusters = {name: freshness.to_dict() for name, freshness in judged.items() if not freshness.current}
    too_long = sorted(name for name, freshness in judged.items() if freshness.stale_seconds() > threshold)
    result: dict[str, Any] = {"status": "fail" if too_long else "ok", "threshold_seconds": threshold}
    result["clusters"] = clusters
    if too_long:
        result["stale"] = too_long
        result["reason"] = "; ".join(f"{name}: {judged[name].summary()}" for name in too_long)
    return result


_CHECKS: dict[str, Callable[[], dict[str, Any]]] = {
    "database": check_database,
    "broker": check_broker,
    "sync": check_sync,
    "freshness": check_freshness,
}


@never_cache
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    """Every check with its result. 503 when a check named in OME_READY_REQUIRE fails; a failing
    check that is not required makes the status `degraded` (200): the web still serves what it
    has, e.g. the last matrix while Redis or a cluster's API server is down."""
    required = {name.strip() for name in settings.OME_READY_REQUIRE if name.strip()}
    checks = {name: _timed(function) for name, function in _CHECKS.items()}
    failed = {name for name, result in checks.items() if result["status"] == "fail"}
    for name, result in checks.items():
        result["required"] = name in required
    status = "fail" if failed & required else ("degraded" if failed else "ok")
    code = 503 if status == "fail" else 200
    if not _shows_details(request):
        # Cluster names and their failing kinds are not for whoever can reach the pod.
        return JsonResponse({"status": "fail" if code == 503 else "ok"}, status=code)
    return JsonResponse({"status": status, "checks": checks}, status=code)


def _shows_details(request: HttpRequest) -> bool:
    """The checks are for whoever may read /metrics (the METRICS_TOKEN bearer; anyone under
    DEBUG without a token, as `make run`) and for signed-in superusers. This view runs before
    the session and authentication middleware (ProbeMiddleware), so it reads the session itself."""
    if metrics_scope(request) is not None:
        return True
    key = request.COOKIES.get(settings.SESSION_COOKIE_NAME)
    if not key:
        return False
    request.session = import_module(settings.SESSION_ENGINE).SessionStore(key)
    try:
        return bool(auth.get_user(request).is_superuser)
    except DatabaseError:
        return False
