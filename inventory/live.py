"""Keeping the inventory of a live cluster current: full resyncs, and watches applying each change.

A resync lists a kind and makes the stored objects equal to the list (pruning the rest). A watch
applies every ADDED, MODIFIED and DELETED event as it comes, from the resourceVersion stored in
SyncState, which it advances after each event and BOOKMARK so that the next watch resumes there.

Resyncs and watches of the same kind may run at the same time (beat's resync while a watch task
runs). Both write under a lock on the kind's SyncState row, and SyncState.resource_version is the
point of the cluster's history the stored objects reflect: an event at or before it is already
included (skipped), and a list older than it would undo newer events (listed again).
"""

from __future__ import annotations

import logging
import math
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from . import kube, records
from .kube import KubeConfigError, KubeError, KubeGone, KubeNotFound, KubeUnauthorized, KubeUnavailable
from .models import Cluster, Kind, Resource, SyncState
from .services import manifests_load
from .sync import ApplyResult, ObjectKey, event_apply, record_error, record_list, snapshot_apply

logger = logging.getLogger(__name__)

# A list older than what a running watch has already applied is retried this many times in all;
# the last attempt is applied anyway, so an API server whose numbering restarted cannot wedge us.
RESYNC_ATTEMPTS = 3
# How often a watch's helper thread looks at the stop event to end a silent stream.
STOP_POLL_SECONDS = 0.1
# Errors that the same request will meet again: a watch ends on them instead of retrying, and
# the next resync or ensure_watches tick tries again.
PERMANENT_ERRORS = (KubeUnauthorized, KubeNotFound, KubeConfigError)
WATCHED_EVENTS = frozenset({"ADDED", "MODIFIED", "DELETED"})


# ---- resourceVersions ------------------------------------------------------------------------


def _rv_order(left: str, right: str) -> int | None:
    """-1, 0 or 1 comparing two resourceVersions; None when their order is unknown.

    resourceVersions are opaque by contract, but every etcd-backed API server hands out etcd
    revisions, which are increasing integers; anything else (or an empty value) is unordered.
    """
    if not (left.isdigit() and right.isdigit()):
        return None
    a, b = int(left), int(right)
    return (a > b) - (a < b)


def _object_rv(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("resourceVersion") or "") if isinstance(metadata, Mapping) else ""


def _locked_state(cluster: Cluster, kind: str) -> SyncState:
    """The kind's SyncState, locked until the surrounding transaction ends."""
    state, _ = SyncState.objects.select_for_update().get_or_create(cluster=cluster, kind=kind)
    return state


def _count_into(state: SyncState) -> None:
    counts = Resource.objects.filter(cluster=state.cluster_id, kind=state.kind).aggregate(
        count=Count("pk"), invalid=Count("pk", filter=~Q(error=""))
    )
    state.count, state.invalid = counts["count"], counts["invalid"]


# ---- resync ----------------------------------------------------------------------------------


@dataclass
class ResyncResult:
    """What a resync changed, and the error of each kind that failed."""

    applied: ApplyResult = field(default_factory=ApplyResult)
    errors: dict[str, KubeError] = field(default_factory=dict)
    manifest_errors: list[str] = field(default_factory=list)

    def transient_error(self) -> KubeUnavailable | None:
        """The first error worth retrying soon (server down or 5xx), if any kind had one."""
        return next((e for e in self.errors.values() if isinstance(e, KubeUnavailable)), None)


def _keyed(kind: str, items: Iterable[dict[str, Any]]) -> dict[ObjectKey, dict[str, Any]]:
    objects = {}
    for obj in items:
        key = records.identity(obj)
        if key is None or key[0] != kind:
            # Without a name the object cannot be stored, not even as an error.
            logger.warning("list of %s: skipped an object without a usable kind or name", kind)
            continue
        objects[key] = obj
    return objects


def kind_resync(cluster: Cluster, kind: str, *, api: Any, result: ApplyResult | None = None) -> str:
    """List one kind and make the stored objects equal to the list, removing the others.

    Records the list in SyncState and returns its resourceVersion. Raises KubeError.
    """
    for attempt in range(1, RESYNC_ATTEMPTS + 1):
        items, resource_version = kube.list_kind(api, kind)
        objects = _keyed(kind, items)
        with transaction.atomic():
            state = _locked_state(cluster, kind)
            if attempt < RESYNC_ATTEMPTS and _rv_order(state.resource_version, resource_version) == 1:
                # A watch applied events newer than this list while it was read; storing the list
                # now would undo them. A fresh list is at least as new.
                logger.info(
                    "cluster %s %s: list at %s is older than the stored %s; listing again",
                    cluster,
                    kind,
                    resource_version,
                    state.resource_version,
                )
                continue
            snapshot_apply(cluster, kind, objects, prune=True, result=result)
            record_list(cluster, kind, resource_version=resource_version)
        logger.info("cluster %s %s: listed %d objects at %s", cluster, kind, len(objects), resource_version)
        return resource_version
    raise AssertionError("unreachable")  # pragma: no cover


def cluster_resync(cluster: Cluster, *, kinds: Sequence[str] | None = None) -> ResyncResult:
    """A full resync: list every kind (or `kinds`) and store it, pruning what is gone.

    A kind that fails gets its error recorded in SyncState; the other kinds go on. A manifest
    cluster reloads its folders instead.
    """
    kinds = list(kinds or Kind.values)
    result = ResyncResult()
    if not cluster.is_live:
        result.applied, snapshot = manifests_load(cluster, cluster.manifests, prune=True)
        result.manifest_errors = snapshot.errors
        return result
    try:
        api = kube.client_for(cluster)
    except KubeError as error:
        record_error(cluster, kinds, error.message)
        result.errors = dict.fromkeys(kinds, error)
        return result
    try:
        for index, kind in enumerate(kinds):
            try:
                kind_resync(cluster, kind, api=api, result=result.applied)
            except KubeError as error:
                failed = kinds[index:] if error.cluster_wide else [kind]
                logger.warning("cluster %s %s: resync failed: %s", cluster, ", ".join(failed), error.message)
                record_error(cluster, failed, error.message)
                result.errors.update(dict.fromkeys(failed, error))
                if error.cluster_wide:
                    break
    finally:
        kube.close(api)
    return result


# ---- watch -----------------------------------------------------------------------------------


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


def watch_event_apply(cluster: Cluster, kind: str, event_type: str, obj: dict[str, Any]) -> bool:
    """Store one watch event of `kind` and advance the stored resourceVersion to it.

    Returns False when the stored inventory already reflects the event (its resourceVersion is
    not newer than the stored one), so it was skipped. BOOKMARKs only advance the resourceVersion.
    """
    resource_version = _object_rv(obj)
    with transaction.atomic():
        state = _locked_state(cluster, kind)
        order = _rv_order(resource_version, state.resource_version)
        if order is not None and order <= 0:
            return False
        if event_type == "BOOKMARK":
            state.resource_version = resource_version
            state.save(update_fields=["resource_version"])
            return True
        event_apply(cluster, event_type, obj)
        state.resource_version = resource_version or state.resource_version
        state.last_event_at = timezone.now()
        _count_into(state)
        state.save(update_fields=["resource_version", "last_event_at", "count", "invalid"])
    return True


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
    updates: dict[str, Any] = {"watch_connected": connected}
    if connected:
        updates["last_error"] = ""
    SyncState.objects.filter(cluster=cluster, kind=kind).update(**updates)


def _count_reconnect(cluster: Cluster, kind: str) -> None:
    SyncState.objects.filter(cluster=cluster, kind=kind).update(
        watch_reconnects=F("watch_reconnects") + 1, watch_connected=False
    )


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
                    record_error(self.cluster, [self.kind], error.message)
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
        record_error(self.cluster, [self.kind], error.message)
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
            self.on_event(
                WatchEvent(self.cluster.name, self.kind, event_type, key[1], key[2], _object_rv(obj), applied)
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
    token, see watch_lease_claim), the lease is renewed while watching and the watch ends if
    someone else took it. `on_event` is called after each event is stored.
    """
    return _Watcher(cluster, kind, stop=stop, deadline=deadline, lease=lease, on_event=on_event).run()


# ---- leases ----------------------------------------------------------------------------------


def _lease_expiry() -> datetime:
    return timezone.now() + timedelta(seconds=settings.OME_WATCH_LEASE)


def watch_lease_claim(cluster: Cluster, kind: str, *, owner: str, force: bool = False) -> bool:
    """Take the watch lease of one kind for `owner`, unless someone else holds a live one
    (`force` takes it anyway; the holder notices when it next renews, and stops)."""
    SyncState.objects.get_or_create(cluster=cluster, kind=kind)
    now = timezone.now()
    states = SyncState.objects.filter(cluster=cluster, kind=kind)
    if not force:
        states = states.filter(
            Q(watch_owner="") | Q(watch_owner=owner) | Q(watch_lease_until__isnull=True) | Q(watch_lease_until__lte=now)
        )
    return states.update(watch_owner=owner, watch_lease_until=_lease_expiry()) == 1


def watch_lease_renew(cluster: Cluster, kind: str, *, owner: str) -> bool:
    """Extend `owner`'s lease; False when the lease is no longer theirs."""
    return (
        SyncState.objects.filter(cluster=cluster, kind=kind, watch_owner=owner).update(
            watch_lease_until=_lease_expiry()
        )
        == 1
    )


def watch_lease_release(cluster: Cluster, kind: str, *, owner: str) -> None:
    SyncState.objects.filter(cluster=cluster, kind=kind, watch_owner=owner).update(
        watch_owner="", watch_lease_until=None
    )


@dataclass(frozen=True)
class WatchClaim:
    cluster_id: int
    kind: str
    owner: str


def watch_claim_release(claim: WatchClaim) -> None:
    """Give back a claimed lease whose watch will not be started."""
    SyncState.objects.filter(cluster_id=claim.cluster_id, kind=claim.kind, watch_owner=claim.owner).update(
        watch_owner="", watch_lease_until=None
    )


def live_kinds_count() -> int:
    """How many (live cluster, kind) pairs there are to watch."""
    return Cluster.objects.exclude(source=Cluster.Source.MANIFESTS).count() * len(Kind.values)


def watches_claim_idle() -> list[WatchClaim]:
    """Claim the lease of every kind of every live cluster that nobody watches; the caller
    starts a watch for each claim, which renews the lease from then on."""
    claims = []
    for cluster in Cluster.objects.exclude(source=Cluster.Source.MANIFESTS):
        for kind in Kind.values:
            owner = f"task:{uuid.uuid4().hex}"
            if watch_lease_claim(cluster, kind, owner=owner):
                claims.append(WatchClaim(cluster.pk, kind, owner))
    return claims


# ---- a long-running watcher (manage.py sync_cluster) --------------------------------------------


def _watch_until_stopped(
    cluster: Cluster,
    kind: str,
    *,
    stop: threading.Event,
    owner: str,
    on_event: Callable[[WatchEvent], None] | None,
    failures: list[BaseException],
) -> None:
    try:
        watch_lease_claim(cluster, kind, owner=owner, force=True)
        while not stop.is_set():
            report = kind_watch(cluster, kind, stop=stop, deadline=math.inf, lease=owner, on_event=on_event)
            if report.ended == "lease lost":
                logger.warning("cluster %s %s: another watcher took the lease; this one stops", cluster, kind)
                return
            if report.ended == "error":
                # Credentials refused or CRD missing: ask again now and then.
                stop.wait(settings.OME_WATCH_BACKOFF_MAX)
    except BaseException as error:
        logger.exception("cluster %s %s: watcher crashed", cluster, kind)
        failures.append(error)
        stop.set()
    finally:
        watch_lease_release(cluster, kind, owner=owner)
        # Each thread has its own database connection; Django closes only the main thread's.
        connection.close()


def cluster_watch(
    cluster: Cluster,
    *,
    stop: threading.Event,
    kinds: Sequence[str] | None = None,
    on_event: Callable[[WatchEvent], None] | None = None,
) -> None:
    """Watch every kind (or `kinds`) of a cluster, one thread each, until `stop` is set.

    Takes the watch leases (so beat's ensure_watches stands aside) and gives them back at the
    end. If a watcher thread crashes, the others are stopped and its exception is raised.
    """
    owner = f"sync_cluster:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    failures: list[BaseException] = []
    threads = [
        threading.Thread(
            target=_watch_until_stopped,
            args=(cluster, kind),
            kwargs={"stop": stop, "owner": owner, "on_event": on_event, "failures": failures},
            name=f"watch {cluster.name} {kind}",
        )
        for kind in (kinds or Kind.values)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
