"""Fair shares of the live clusters among the watch workers.

Any watch worker may take a watch_cluster task from the queue, so which worker watches which
cluster is first come, first served: a worker that starts (or restarts) while the others hold
every lease would get nothing, and one worker would keep all the clusters after a rolling
restart. So each worker's watch hub announces itself in Redis (the broker) every third of a
lease; a hub holds at most ceil(live clusters / live hubs) clusters, refuses more, and gives
the excess back; the next ensure_watches tick hands it to a hub below its share.

A hub that stops announcing (killed, or starved for CPU) stops counting after half a lease:
before its leases lapse, so the others' shares have grown by the time they may take its clusters.
Counting too few hubs only raises the shares, which never blocks a watch.
"""

from __future__ import annotations

import math
from functools import cache

import redis
from django.conf import settings

# A sorted set: hub id -> when it last announced itself (Unix time).
HUBS_KEY = "ome:watch:hubs"


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def announce_period() -> float:
    return settings.OME_WATCH_LEASE / 3


def hubs_announce(hub_id: str) -> int:
    """Say that hub `hub_id` runs; returns how many hubs run (this one included)."""
    client = _client(settings.CELERY_BROKER_URL)
    seconds, microseconds = client.time()  # Redis's clock, one for every hub, as leases use the database's
    now = seconds + microseconds / 1e6
    pipe = client.pipeline(transaction=True)
    pipe.zadd(HUBS_KEY, {hub_id: now})
    pipe.zremrangebyscore(HUBS_KEY, "-inf", now - settings.OME_WATCH_LEASE / 2)
    pipe.zcard(HUBS_KEY)
    return max(1, int(pipe.execute()[-1]))


def hubs_withdraw(hub_id: str) -> None:
    """A stopping hub no longer counts (the others' shares grow at their next announcement)."""
    _client(settings.CELERY_BROKER_URL).zrem(HUBS_KEY, hub_id)


def fair_share(clusters: int, hubs: int) -> int:
    """The most clusters one of `hubs` hubs holds when `clusters` live clusters spread evenly."""
    return max(1, math.ceil(clusters / max(1, hubs)))
