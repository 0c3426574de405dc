"""Watching one kind: every event applied as it comes, resumed after breaks without loss."""

from __future__ import annotations

import logging
import math
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import F

from .. import kube, records
from ..kube import KubeConfigError, KubeError, KubeGone, KubeNotFound, KubeUnauthorized
from ..models import Cluster, SyncState
from ..sync import record_error
from .events import watch_event_apply
from .leases import watch_lease_renew
from .resync import kind_resync
from .state import object_rv

logger = logging.getLogger(__name__)

# How often a watch's helper thread looks at the stop event to end a silent stream.
STOP_POLL_SECONDS = 0.1
# Errors that the same request will meet again: a watch ends on them instead of retrying, and
# the next resync or ensure_watches tick tries again.
PERMANENT_ERRORS = (KubeUnauthorized, KubeNotFound, KubeConfigError)
WATCHED_EVENTS = frozenset({"ADDED", "MODIFIED", "DELETED"})


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


@contextmanager
def _stopped_on(stop: threading.Event, stream: kube.WatchStream) -> Iterator[None]:
    """Stop `stream` as soon as `stop` is set, even when no event arrives to notice it."""
    finished = threading.Event()

    def wait() -> None:
        while not finished.is_set():
            if stop.wait(STOP_POLL_SECONDS):
                stream.stop()
                return

    threading.Thread(target=wait, name=f"stop {stream.kind} watch", daemon=True).start()
    try:
        yield
    finally:
        finished.set()


def _set_connected(cluster: Cluster, kind: str, connected: bool) -> None:
    states = SyncState.objects.filter(cluster=cluster, kind=kind)
    states.update(watch_connected=connected)
    if connected:  # a failed list's error stays until a list succeeds
        states.filter(last_error_from="watch").update(last_error="", last_error_from="")


def _count_reconnect(cluster: Cluster, kind: str) -> None:
    SyncState.objects.filter(cluster=cluster, kind=kind).update(
        watch_reconnects=F("watch_reconnects") + 1, watch_connected=False
    )


def _listed(cluster: Cluster, kind: str) -> bool:
    """True once the kind was listed, so a watch can resume from the stored resourceVersion."""
    return (
        SyncState.objects.filter(cluster=cluster, kind=kind, last_list_at__isnull=False)
        .exclude(resource_version="")
        .exists()
    )


def _stored_state(cluster: Cluster, kind: str) -> SyncState:
    return SyncState.objects.get(cluster=cluster, kind=kind)


class _Watcher:
    """The state of one kind_watch call; see kind_watch."""

    def __init__(
        self,
        cluster: Cluster,
        kind: str,
        *,
        stop: threading.Event,
        deadline: float,
        lease: str | None,
        on_event: Callable[[WatchEvent], None] | None,
    ) -> None:
        self.cluster, self.kind = cluster, kind
        self.stop, self.deadline, self.lease, self.on_event = stop, deadline, lease, on_event
        self.report = WatchReport(kind)
        self.backoff = Backoff(settings.OME_WATCH_BACKOFF_BASE, settings.OME_WATCH_BACKOFF_MAX)
        self.lease_ttl = float(settings.OME_WATCH_LEASE)
        self.renewed_at = -math.inf
        self.api: Any = None

    def run(self) -> WatchReport:
        must_list = not _listed(self.cluster, self.kind)
        try:
            while not self._should_end():
                try:
                    if self.api is None:
                        self.api = kube.client_for(self.cluster)
                    if must_list:
                        kind_resync(self.cluster, self.kind, api=self.api)
                        must_list = False
                    self._watch_once()
                except KubeGone as error:
                    if must_list:  # the list itself kept expiring
                        self._failed(error)
                    else:
                        logger.info("cluster %s %s: %s; listing again", self.cluster, self.kind, error.message)
                        must_list = True
                        self.report.relists += 1
                        self.report.reconnects += 1
                        _count_reconnect(self.cluster, self.kind)
                except PERMANENT_ERRORS as error:
                    logger.warning("cluster %s %s: watch ends: %s", self.cluster, self.kind, error.message)
                    record_error(self.cluster, [self.kind], error.message, source="watch")
                    self.report.ended, self.report.error = "error", error
                except KubeError as error:
                    self._failed(error)
        finally:
            _set_connected(self.cluster, self.kind, False)
            if self.api is not None:
                kube.close(self.api)
        return self.report

    def _should_end(self) -> bool:
        if self.report.ended:
            return True
        if self.stop.is_set():
            self.report.ended = "stopped"
        elif time.monotonic() >= self.deadline:
            self.report.ended = "deadline"
        elif not self._renew_lease(force=True):
            self.report.ended = "lease lost"
        return bool(self.report.ended)

    def _renew_lease(self, *, force: bool = False) -> bool:
        if self.lease is None:
            return True
        now = time.monotonic()
        if not force and now - self.renewed_at < self.lease_ttl / 3:
            return True
        self.renewed_at = now
        return watch_lease_renew(self.cluster, self.kind, owner=self.lease)

    def _failed(self, error: KubeError) -> None:
        logger.warning("cluster %s %s: watch failed: %s", self.cluster, self.kind, error.message)
        record_error(self.cluster, [self.kind], error.message, source="watch")
        _count_reconnect(self.cluster, self.kind)
        self.report.reconnects += 1
        delay = min(self.backoff.next_delay(), max(0.0, self.deadline - time.monotonic()))
        self.stop.wait(delay)

    def _watch_once(self) -> None:
        """One watch request from the stored resourceVersion, until it ends or we stop."""
        resource_version = _stored_state(self.cluster, self.kind).resource_version
        remaining = self.deadline - time.monotonic()
        # The stream ends (and the lease is renewed) at least every half lease.
        timeout = max(1, math.ceil(min(remaining, self.lease_ttl / 2)))
        stream = kube.watch_kind(
            self.api,
            self.kind,
            resource_version,
            timeout,
            on_connect=lambda: _set_connected(self.cluster, self.kind, True),
        )
        with _stopped_on(self.stop, stream):
            for event_type, obj in stream:
                self._handle(event_type, obj)
                if self.stop.is_set():
                    break
                if not self._renew_lease():
                    self.report.ended = "lease lost"
                    break
        # The stream ended cleanly or delivered events: the connection works again.
        self.backoff.reset()

    def _handle(self, event_type: str, obj: dict[str, Any]) -> None:
        if event_type != "BOOKMARK" and event_type not in WATCHED_EVENTS:
            logger.warning("cluster %s %s: ignored a %s event", self.cluster, self.kind, event_type)
            return
        applied = watch_event_apply(self.cluster, self.kind, event_type, obj)
        if event_type == "BOOKMARK":
            self.report.bookmarks += 1
        elif applied:
            self.report.applied += 1
        else:
            self.report.skipped += 1
        if self.on_event is not None:
            key = records.identity(obj) or (self.kind, "", "")
            self.on_event(WatchEvent(self.cluster.name, self.kind, event_type, key[1], key[2], object_rv(obj), applied))


def kind_watch(
    cluster: Cluster,
    kind: str,
    *,
    stop: threading.Event,
    deadline: float,
    lease: str | None = None,
    on_event: Callable[[WatchEvent], None] | None = None,
) -> WatchReport:
    """Watch one kind and apply each event, until `stop` is set or `deadline` (a time.monotonic()
    value; math.inf for no end) passes.

    Starts from the stored resourceVersion (listing first if the kind was never listed). A stream
    that ends is resumed from the last resourceVersion seen; one that breaks, after a backoff; a
    410 Gone lists again (pruning what was deleted meanwhile). Credentials refused, a missing CRD
    or an unusable kubeconfig end the watch early with the error recorded. With `lease` (an owner
    token, see leases.watch_lease_claim), the lease is renewed while watching and the watch ends
    if someone else took it. `on_event` is called after each event is stored.
    """
    return _Watcher(cluster, kind, stop=stop, deadline=deadline, lease=lease, on_event=on_event).run()
