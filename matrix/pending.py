"""Coalescing matrix updates: at most one queued update per cluster, however many changes come.

Each inventory change appends its description to the cluster's causes and sets the cluster's
pending marker in Redis (the broker); only the change that set the marker queues an update, due
MATRIX_UPDATE_DELAY seconds later so that a burst gathers behind it. The update takes the marker
and the causes before it reads anything, so a change committed after that queues the next one.
If Redis loses both (a restart), nothing is wrong for long: the update levels every stale row
whatever its causes (matrix.updates), and the periodic catch-up finds the rows no update fixed.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import redis
from django.conf import settings

# A marker whose update was lost stops holding back new ones after this many seconds.
MARKER_TTL = 120
# The causes kept for the history of one update (the update itself levels everything stale).
MAX_CAUSES = 100


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def _keys(cluster_id: int) -> tuple[str, str]:
    return f"ome:matrix:pending:{cluster_id}", f"ome:matrix:causes:{cluster_id}"


def _updating_key(cluster_id: int) -> str:
    """Set while an update that took the marker runs (expires as a marker does: its worker may die)."""
    return f"ome:matrix:updating:{cluster_id}"


def mark_pending(cluster_id: int, causes: list[dict[str, Any]]) -> bool:
    """Record the causes; True when this call set the marker, so the caller queues the update."""
    marker, cause_list = _keys(cluster_id)
    pipe = _client(settings.CELERY_BROKER_URL).pipeline(transaction=True)
    if causes:
        pipe.rpush(cause_list, *(json.dumps(cause) for cause in causes))
        pipe.ltrim(cause_list, -MAX_CAUSES, -1)
    pipe.set(marker, "1", nx=True, ex=MARKER_TTL)
    return bool(pipe.execute()[-1])


def clear_pending(cluster_id: int) -> None:
    """Give the marker back when its update could not be queued."""
    _client(settings.CELERY_BROKER_URL).delete(_keys(cluster_id)[0])


def take_pending(cluster_id: int) -> list[dict[str, Any]]:
    """Clear the marker and return the causes gathered since the last update."""
    marker, cause_list = _keys(cluster_id)
    pipe = _client(settings.CELERY_BROKER_URL).pipeline(transaction=True)
    pipe.lrange(cause_list, 0, -1)
    pipe.delete(cause_list, marker)
    pipe.set(_updating_key(cluster_id), "1", ex=MARKER_TTL)
    raw, _, _ = pipe.execute()
    return [json.loads(item) for item in raw]


def update_done(cluster_id: int) -> None:
    """The update that took the marker ended (levelled, or failed)."""
    _client(settings.CELERY_BROKER_URL).delete(_updating_key(cluster_id))


def updates_on_their_way(cluster_ids: list[int]) -> set[int] | None:
    """The clusters whose update is queued or running; None when Redis cannot say. A cluster
    behind without either lost its update (a worker or Redis died with it): the periodic
    catch-up levels it (matrix.tasks)."""
    if not cluster_ids:
        return set()
    pipe = _client(settings.CELERY_BROKER_URL).pipeline(transaction=False)
    for cluster_id in cluster_ids:
        pipe.exists(_keys(cluster_id)[0], _updating_key(cluster_id))
    try:
        found = pipe.execute()
    except redis.RedisError:
        return None
    return {cluster_id for cluster_id, count in zip(cluster_ids, found, strict=True) if count}
