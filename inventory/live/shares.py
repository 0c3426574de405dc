"""Fair shares of the live clusters among the watch workers.

Any watch worker may take a watch_cluster task from the queue, so which worker watches which
cluster is first come, first served: a worker that starts (or restarts) while the others hold
every lease would get nothing, and one worker would keep all the clusters after a rolling
restart. So each worker's watch hub announces itself in Redis (the broker) every sixth of a
lease; a hub holds at most ceil(live clusters / live hubs) clusters, refuses more, and gives
the excess back, which a hub below its share takes at its next round.

A hub that stops announcing (killed, or starved for CPU) stops counting after half a lease.
Its leases name it (`hub_owner`), so from then on the others may take its clusters without
waiting for those leases to lapse (inventory.live.leases): a killed worker's clusters move
within the lease. A hub that was only starved finds its leases taken at its next renewal and
stops those watches, as after a forced claim. Counting too few hubs only raises the shares,
which never blocks a watch.
"""

from __future__ import annotations

import math
import uuid
from functools import cache

import redis
from django.conf import settings

# A sorted set: hub id -> when it last announced itself (Unix time).
HUBS_KEY = "ome:watch:hubs"
# The start of the owner tokens of the leases a hub holds: hub/<hub id>/<random>.
HUB_OWNER = "hub/"


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def announce_period() -> float:
    """A sixth of a lease: a hub stops counting after three announcements missed (half a lease),
    and the others notice within a sixth more, so a dead hub's clusters move within 2/3 of a lease."""
    return settings.OME_WATCH_LEASE / 6


def hub_owner(hub_id: str) -> str:
    """A new lease owner token that names hub `hub_id` (see `owner_hub`)."""
    return f"{HUB_OWNER}{hub_id}/{uuid.uuid4().hex[:16]}"


def owner_hub(owner: str) -> str | None:
    """The hub a lease owner token names, or None (a task's or a command's token)."""
    if not owner.startswith(HUB_OWNER):
        return None
    return owner[len(HUB_OWNER) :].rpartition("/")[0] or None


def hubs_announce(hub_id: str) -> frozenset[str]:
    """Say that hub `hub_id` runs; returns the hubs that run (this one included)."""
    client = _client(settings.CELERY_BROKER_URL)
    seconds, microseconds = client.time()  # Redis's clock, one for every hub, as leases use the database's
    now = seconds + microseconds / 1e6
    pipe = client.pipeline(transaction=True)
    pipe.zadd(HUBS_KEY, {hub_id: now})
    pipe.zremrangebyscore(HUBS_KEY, "-inf", now - settings.OME_WATCH_LEASE / 2)
    pipe.zrange(HUBS_KEY, 0, -1)
    return frozenset(hub.decode() for hub in pipe.execute()[-1]) | {hub_id}


def hubs_withdraw(hub_id: str) -> None:
    """A stopping hub no longer counts (the others' shares grow at their next announcement)."""
    _client(settings.CELERY_BROKER_URL).zrem(HUBS_KEY, hub_id)


def fair_share(clusters: int, hubs: int) -> int:
    """The most clusters one of `hubs` hubs holds when `clusters` live clusters spread evenly."""
    return max(1, math.ceil(clusters / max(1, hubs)))
