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

A hub trusts a missing announcement to mean a stopped hub only once it has itself announced
without a gap for half a lease (`Hubs.sure`): after a Redis outage or a restart that lost the
set, the first hub back would otherwise see no other and take every running hub's clusters.
"""

from __future__ import annotations

import math
import uuid
from functools import cache
from typing import NamedTuple
from urllib.parse import quote, unquote

import redis
from django.conf import settings

# A sorted set: hub id -> when it last announced itself (Unix time).
HUBS_KEY = "ome:watch:hubs"
# The start of the owner tokens of the leases a hub holds: hub/<hub id>/<random>.
HUB_OWNER = "hub/"
# Per hub: when it started announcing itself without a gap (expires after half a lease unsaid).
SINCE_KEY = "ome:watch:hub-since:{hub}"


@cache
def _client(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)


def announce_period() -> float:
    """A sixth of a lease: a hub stops counting after three announcements missed (half a lease),
    and the others notice within a sixth more, so a dead hub's clusters move within 2/3 of a lease."""
    return settings.OME_WATCH_LEASE / 6


def hub_owner(hub_id: str) -> str:
    """A new lease owner token that names hub `hub_id` (see `owner_hub`)."""
    return f"{hub_tokens(hub_id)}{uuid.uuid4().hex[:16]}"


def hub_tokens(hub_id: str) -> str:
    """The start of hub `hub_id`'s tokens and of no other hub's: its id is quoted, so that the
    tokens of hub `a` do not start those of hub `a/b`."""
    return f"{HUB_OWNER}{quote(hub_id, safe=':')}/"


def owner_hub(owner: str) -> str | None:
    """The hub a lease owner token names, or None (a task's or a command's token)."""
    if not owner.startswith(HUB_OWNER):
        return None
    return unquote(owner[len(HUB_OWNER) :].rpartition("/")[0]) or None


class Hubs(NamedTuple):
    """The hubs that run (the announcing one included), as one of them learnt announcing itself."""

    running: frozenset[str]
    # Whether a hub missing from `running` is stopped: the announcing hub has announced itself
    # without a gap for half a lease, so Redis kept the set that long and any running hub that
    # could reach it is in it. Not so after an outage, a restart of Redis, or a starved hub's gap.
    sure: bool


def hubs_announce(hub_id: str) -> Hubs:
    """Say that hub `hub_id` runs; returns the hubs that run."""
    client = _client(settings.CELERY_BROKER_URL)
    seconds, microseconds = client.time()  # Redis's clock, one for every hub, as leases use the database's
    now = seconds + microseconds / 1e6
    half_lease = settings.OME_WATCH_LEASE / 2
    since_key = SINCE_KEY.format(hub=hub_id)
    pipe = client.pipeline(transaction=True)
    pipe.zadd(HUBS_KEY, {hub_id: now})
    pipe.zremrangebyscore(HUBS_KEY, "-inf", now - half_lease)
    pipe.zrange(HUBS_KEY, 0, -1)
    pipe.set(since_key, now, nx=True)
    pipe.pexpire(since_key, math.ceil(half_lease * 1000))  # a gap of half a lease starts it again
    pipe.get(since_key)
    _, _, hubs, _, _, since = pipe.execute()
    return Hubs(frozenset(hub.decode() for hub in hubs) | {hub_id}, sure=now - float(since) >= half_lease)


def hubs_withdraw(hub_id: str) -> None:
    """A stopping hub no longer counts (the others' shares grow at their next announcement)."""
    client = _client(settings.CELERY_BROKER_URL)
    client.zrem(HUBS_KEY, hub_id)
    client.delete(SINCE_KEY.format(hub=hub_id))


def fair_share(clusters: int, hubs: int) -> int:
    """The most clusters one of `hubs` hubs holds when `clusters` live clusters spread evenly."""
    return max(1, math.ceil(clusters / max(1, hubs)))
