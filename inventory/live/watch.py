"""Watching one kind: events applied as they come (in batches), resumed after breaks without loss.

A watch is a coroutine (KindWatch) that the watch hub (hub.py) runs next to the watches of
every other kind and cluster on one event loop. It reaches the database only through `db`
(`await db(function, *args)`), which runs Django code in the hub's few database threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import DatabaseError
from django.db.models import F, QuerySet
from django.db.models.functions import Coalesce, Now

from .. import records
from ..kube import KubeConfigError, KubeError, KubeGone, KubeNotFound, KubeUnauthorized, KubeUnavailable
from ..kube import aio as kube
from ..models import Cluster, SyncState
from ..sync import record_error
from .batches import batched
from .events import Event, watch_events_apply
from .leases import watch_lease_renew
from .resync import RESYNC_ATTEMPTS, kind_list_store
from .state import object_rv

logger = logging.getLogger(__name__)

# Errors that the same request will meet again: a watch ends on them instead of retrying, and
# its holder tries again later (see hub.WatchHub).
PERMANENT_ERRORS = (KubeUnauthorized, KubeNotFound, KubeConfigError)
WATCHED_EVENTS = frozenset({"ADDED", "MODIFIED", "DELETED"})
# At most this many events are stored in one transaction (see batches.py).
EVENT_BATCH = 250

# `await db(function, *args, **kwargs)`: run Django code off the event loop and await its result.
Db = Callable[..., Awaitable[Any]]


@dataclass(frozen=True)
class WatchEvent:
    """One event a watch received, after it was stored (or skipped as already stored)."""

    cluster: str
    kind: str
    type: str
    namespace: str
    name: str
    resource_version: str
    applied: bool


@dataclass
class WatchReport:
    kind: str
    applied: int = 0
    skipped: int = 0
    bookmarks: int = 0
    reconnects: int = 0
    relists: int = 0
    # "deadline", "stopped", "lease lost", or "error" (then `error` says which).
    ended: str = ""
    error: KubeError | None = None


class Backoff:
    """Exponential backoff, capped, with jitter so that many watchers do not reconnect in step."""

    def __init__(self, base: float, cap: float) -> None:
        self.base, self.cap = base, cap
        self.failures = 0

    def next_delay(self) -> float:
        ceiling = min(self.cap, self.base * 2**self.failures)
        self.failures += 1
        return ceiling / 2 + random.uniform(0, ceiling / 2)

    def reset(self) -> None:
        self.failures = 0


def _set_connected(cluster: Cluster, kind: str, connected: bool) -> None:
    states = SyncState.objects.filter(cluster=cluster, kind=kind)
    if connected:
        states.update(watch_connected=True, watch_lost_at=None)
        # a failed list's error stays until a list succeeds
        states.filter(last_error_from="watch").update(last_error="", last_error_from="")
    else:
        watch_lost(states)


def watch_lost(states: QuerySet[SyncState], **also: Any) -> None:
    """Mark these watches not connected, lost from now (the database's clock, as the leases)
    unless they were lost already."""
    states.update(watch_connected=False, watch_lost_at=Coalesce(F("watch_lost_at"), Now()), **also)


def _count_reconnect(cluster: Cluster, kind: str) -> None:
    watch_lost(SyncState.objects.filter(cluster=cluster, kind=kind), watch_reconnects=F("watch_reconnects") + 1)


def _listed(cluster: Cluster, kind: str) -> bool:
    """True once the kind was listed, so a watch can resume from the stored resourceVersion."""
    return (
        SyncState.objects.filter(cluster=cluster, kind=kind, last_list_at__isnull=False)
        .exclude(resource_version="")
        .exists()
    )


def _stored_rv(cluster: Cluster, kind: str) -> str:
    return SyncState.objects.get(cluster=cluster, kind=kind).resource_version


class KindWatch:
    """Watch one kind of one cluster and apply each event, until stopped, the `deadline` (a
    time.monotonic() value) passes, the lease is lost or a permanent error ends it.

    Starts from the stored resourceVersion (listing first if the kind was never listed). A stream
    that ends is resumed from the last resourceVersion seen; one that breaks, after a backoff; a
    410 Gone lists again (pruning what was deleted meanwhile). Credentials refused, a missing CRD
    or an unusable kubeconfig end the watch with the error recorded. With `lease` (an owner token,
    see leases.watch_lease_claim) the lease is renewed before each request and while events come,
    and the watch ends if someone else took it. `on_event` runs for each event once its batch is
    stored, in the database thread that stored it. `api()` gives the cluster's client (shared by
    its kinds).
    """

    def __init__(
        self,
        cluster: Cluster,
        kind: str,
        *,
        db: Db,
        api: Callable[[], Awaitable[Any]],
        deadline: float = math.inf,
        lease: str | None = None,
        on_event: Callable[[WatchEvent], None] | None = None,
    ) -> None:
        self.cluster, self.kind, self.db, self.api = cluster, kind, db, api
        self.deadline, self.lease, self.on_event = deadline, lease, on_event
        self.report = WatchReport(kind)
        self.backoff = Backoff(settings.OME_WATCH_BACKOFF_BASE, settings.OME_WATCH_BACKOFF_MAX)
        self.lease_ttl = float(settings.OME_WATCH_LEASE)
        self.renewed_at = -math.inf

    async def run(self) -> WatchReport:
        """Watch until the end; cancelling the task that runs it stops it ("stopped")."""
        try:
            must_list = not await self.db(_listed, self.cluster, self.kind)
            while not await self._should_end():
                must_list = await self._attempt(must_list)
        except asyncio.CancelledError:
            # Stopped on purpose (the hub's stop() or its holder): end normally, report and all.
            if task := asyncio.current_task():
                task.uncancel()
            self.report.ended = self.report.ended or "stopped"
        except BaseException:
            await asyncio.shield(self.db(_set_connected, self.cluster, self.kind, False))
            raise
        # A stopping hub marks all its watches at once; a lost lease's state is the new holder's.
        if self.report.ended not in ("stopped", "lease lost"):
            await self.db(_set_connected, self.cluster, self.kind, False)
        return self.report

    async def _attempt(self, must_list: bool) -> bool:
        """List if needed, then one watch request; returns whether the next attempt must list."""
        try:
            if must_list:
                await self._list()
                must_list = False
            await self._watch_once()
        except KubeGone as error:
            if must_list:  # the list itself kept expiring
                await self._failed(error)
            else:
                logger.info("cluster %s %s: %s; listing again", self.cluster, self.kind, error.message)
                self.report.relists += 1
                self.report.reconnects += 1
                await self.db(_count_reconnect, self.cluster, self.kind)
                return True
        except PERMANENT_ERRORS as error:
            logger.warning("cluster %s %s: watch ends: %s", self.cluster, self.kind, error.message)
            await self.db(record_error, self.cluster, [self.kind], error.message, source="watch")
            self.report.ended, self.report.error = "error", error
        except KubeError as error:
            await self._failed(error)
        except DatabaseError as error:
            # The database went away (restarted, locked too long): resume from the stored state.
            await self._failed(KubeUnavailable(f"database error while watching: {error}"), record=False)
        return must_list

    async def _list(self) -> None:
        api = await self.api()
        for attempt in range(1, RESYNC_ATTEMPTS + 1):
            items, resource_version = await kube.list_kind(api, self.kind)
            last = attempt == RESYNC_ATTEMPTS
            if await self.db(kind_list_store, self.cluster, self.kind, items, resource_version, last=last):
                return

    async def _should_end(self) -> bool:
        if not self.report.ended:
            if time.monotonic() >= self.deadline:
                self.report.ended = "deadline"
            elif not await self._renew_lease(force=True):
                self.report.ended = "lease lost"
        return bool(self.report.ended)

    async def _renew_lease(self, *, force: bool = False) -> bool:
        if self.lease is None:
            return True
        now = time.monotonic()
        if not force and now - self.renewed_at < self.lease_ttl / 3:
            return True
        self.renewed_at = now
        return bool(await self.db(watch_lease_renew, self.cluster, self.kind, owner=self.lease))

    async def _failed(self, error: KubeError, *, record: bool = True) -> None:
        logger.warning("cluster %s %s: watch failed: %s", self.cluster, self.kind, error.message)
        if record:
            await self.db(record_error, self.cluster, [self.kind], error.message, source="watch")
        await self.db(_count_reconnect, self.cluster, self.kind)
        self.report.reconnects += 1
        delay = min(self.backoff.next_delay(), max(0.0, self.deadline - time.monotonic()))
        await asyncio.sleep(delay)

    async def _watch_once(self) -> None:
        """One watch request from the stored resourceVersion, until it ends or we stop."""
        api = await self.api()
        resource_version = await self.db(_stored_rv, self.cluster, self.kind)
        remaining = self.deadline - time.monotonic()
        # The stream ends (and the lease is renewed) at least every half lease.
        timeout = max(1, math.ceil(min(remaining, self.lease_ttl / 2)))
        try:
            async with asyncio.timeout_at(self.deadline if math.isfinite(self.deadline) else None):
                stream = kube.watch_kind(api, self.kind, resource_version, timeout, on_connect=self._connected)
                async with contextlib.aclosing(batched(stream, EVENT_BATCH)) as batches:
                    async for events in batches:
                        await self.db(self._handle, events)
                        if not await self._renew_lease():
                            self.report.ended = "lease lost"
                            break
        except TimeoutError:  # asyncio.timeout_at's: watch_kind raises KubeErrors for its own
            self.report.ended = "deadline"
        # The stream ended cleanly or delivered events: the connection works again.
        self.backoff.reset()

    async def _connected(self) -> None:
        await self.db(_set_connected, self.cluster, self.kind, True)

    def _handle(self, events: list[Event]) -> None:
        """Store a batch of events (in a database thread), counting each and telling `on_event`."""
        kept = [event for event in events if event[0] == "BOOKMARK" or event[0] in WATCHED_EVENTS]
        for event_type in {event[0] for event in events} - {event[0] for event in kept}:
            logger.warning("cluster %s %s: ignored %s events", self.cluster, self.kind, event_type)
        if not kept:
            return
        for (event_type, obj), applied in zip(kept, watch_events_apply(self.cluster, self.kind, kept), strict=True):
            self._count(event_type, applied)
            if self.on_event is not None:
                key = records.identity(obj) or (self.kind, "", "")
                event = WatchEvent(self.cluster.name, self.kind, event_type, key[1], key[2], object_rv(obj), applied)
                self.on_event(event)

    def _count(self, event_type: str, applied: bool) -> None:
        if event_type == "BOOKMARK":
            self.report.bookmarks += 1
        elif applied:
            self.report.applied += 1
        else:
            self.report.skipped += 1
