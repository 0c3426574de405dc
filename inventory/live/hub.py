"""The watch hub: the watches of many clusters on one event loop, with a few database threads.

Why: a watch is idle almost all the time, so a thread per watch (five per cluster) spends
threads, stacks and database connections on waiting. The hub runs every watch as a coroutine
on one asyncio loop (inventory.kube.aio, the official client's asyncio twin), and the Django
code they call (storing events, leases, SyncState) in a small pool of database threads, so a
worker holds a hundred clusters with the same few threads and at most that many database
connections. Each watch keeps its own stream, backoff and lease, so a fault in one cluster
(a hung, failing or unreachable API server) only delays that cluster's coroutines.

A watch is held until it is stopped, its lease is lost, or its cluster is gone: it does not
end on a schedule, so no kind waits for the next ensure_watches tick to be watched again. After
a permanent error (credentials refused, CRD missing) it asks again every OME_WATCH_BACKOFF_MAX.
A worker's hub (`share_as`) holds no more than its fair share of the clusters (inventory.live.shares),
and takes whole clusters only (every kind of one, or none), so that no cluster is split.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import math
import queue
import threading
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import redis
from django.conf import settings
from django.db import DatabaseError, close_old_connections

from ..kube import aio as kube
from ..models import Cluster, Kind, SyncState
from .leases import live_clusters_count, watch_claim_release, watch_lease_release, watches_claim_idle
from .renewal import LeaseRenewer
from .shares import announce_period, fair_share, hub_owner, hubs_announce, hubs_withdraw
from .watch import KindWatch, WatchEvent, WatchReport, watch_lost

logger = logging.getLogger(__name__)

Key = tuple[int, str]  # (cluster id, kind)


class DatabaseThreads(concurrent.futures.ThreadPoolExecutor):
    """A few threads for Django code; each has its own connection, checked before each call."""

    def __init__(self, count: int) -> None:
        super().__init__(max_workers=count, thread_name_prefix="watch-db")

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        return super().submit(_with_fresh_connection, fn, *args, **kwargs)


def _with_fresh_connection(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    # A connection the database dropped (restart, CONN_MAX_AGE) is replaced, not reused.
    close_old_connections()
    return fn(*args, **kwargs)


class CallerThread(concurrent.futures.Executor):
    """Runs the hub's database calls in the thread that calls `run_until` (manage.py sync_cluster
    and tests, whose database belongs to one thread)."""

    def __init__(self) -> None:
        self._calls: queue.SimpleQueue[tuple[concurrent.futures.Future[Any], Callable[[], Any]]] = queue.SimpleQueue()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._calls.put((future, functools.partial(fn, *args, **kwargs)))
        return future

    def run_until(self, done: Callable[[], bool], timeout: float = math.inf) -> bool:
        """Run calls as they come until `done()` (checked at least every 0.1 s) or the timeout."""
        waited = 0.0
        while not done():
            if waited >= timeout:
                return False
            try:
                future, call = self._calls.get(timeout=0.1)
            except queue.Empty:
                waited += 0.1
                continue
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as error:  # handed to the awaiting coroutine
                    future.set_exception(error)
        return True


def _live_cluster(cluster_id: int) -> Cluster | None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    return cluster if cluster is not None and cluster.is_live else None


class _Clients:
    """One asyncio client per cluster, shared by its kinds, closed with the last of them."""

    def __init__(self) -> None:
        self._clients: dict[int, asyncio.Task[Any]] = {}
        self._users: dict[int, int] = {}

    def use(self, cluster: Cluster) -> Callable[[], Any]:
        self._users[cluster.pk] = self._users.get(cluster.pk, 0) + 1
        return functools.partial(self._get, cluster)

    async def _get(self, cluster: Cluster) -> Any:
        task = self._clients.get(cluster.pk)
        if task is None or (task.done() and task.exception() is not None):
            # A kubeconfig that failed to load is read again next time (it may have been fixed).
            task = self._clients[cluster.pk] = asyncio.ensure_future(kube.client_for(cluster))
        return await asyncio.shield(task)

    async def release(self, cluster: Cluster) -> None:
        self._users[cluster.pk] -= 1
        if self._users[cluster.pk] > 0:
            return
        del self._users[cluster.pk]
        task = self._clients.pop(cluster.pk, None)
        if task is not None and task.done() and task.exception() is None:
            await kube.close(task.result())


class WatchHub:
    """Holds many watches in one thread of its own; `hold()` and `stop()` may be called from any
    thread. `executor` runs the database calls: DatabaseThreads (a worker) or CallerThread.
    With `share_as` (this hub's id among the workers') it holds at most its fair share of the
    clusters, refusing more and giving back the excess."""

    def __init__(
        self,
        executor: concurrent.futures.Executor,
        *,
        capacity: int | None = None,
        on_event: Callable[[WatchEvent], None] | None = None,
        name: str = "watch-hub",
        share_as: str | None = None,
    ) -> None:
        self.executor = executor
        self.capacity = capacity if capacity is not None else settings.OME_WATCH_HUB_CAPACITY
        self.on_event = on_event
        self.failures: list[BaseException] = []
        self._loop = asyncio.new_event_loop()
        # The loop's own pool resolves host names for aiohttp: keep it small too.
        self._loop.set_default_executor(concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="watch-dns"))
        # Announcements have a thread of their own: behind slow lookups a running hub passes for dead.
        self._announcer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="watch-announce")
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)
        self._tasks: dict[Key, asyncio.Task[WatchReport] | None] = {}
        self._reports: dict[Key, concurrent.futures.Future[WatchReport]] = {}
        # The lease each watch holds, and the watch itself once running (to hand it a new lease).
        self._leases: dict[Key, str | None] = {}
        self._watches: dict[Key, KindWatch] = {}
        self._clients = _Clients()
        self._lock = threading.Lock()
        self._stopped = False
        self.share_as = share_as
        self.share = math.inf  # clusters; set by _balance
        self._balancer: asyncio.Task[None] | None = None
        # Leases renewed ahead of the batches (renewal.py); a caller thread's database is its own.
        self._renewer = LeaseRenewer(self._held_leases) if isinstance(executor, DatabaseThreads) else None

    def start(self) -> WatchHub:
        self._thread.start()
        if self._renewer is not None:
            self._renewer.start()
        if self.share_as is not None:
            # Announced before it claims anything: a lease naming a hub not announced is taken.
            with contextlib.suppress(redis.RedisError):
                hubs_announce(self.share_as)
            self._loop.call_soon_threadsafe(self._start_balancing, self.share_as)
        return self

    def _start_balancing(self, hub_id: str) -> None:
        self._balancer = self._loop.create_task(self._balance(hub_id), name="watch hub balance")

    def _held_leases(self) -> list[str]:
        with self._lock:
            return [lease for lease in self._leases.values() if lease]

    def held(self) -> set[Key]:
        with self._lock:
            return set(self._tasks)

    def hold(
        self,
        cluster_id: int,
        kind: str,
        *,
        lease: str | None,
        deadline: float = math.inf,
        retry_errors: bool = True,
    ) -> concurrent.futures.Future[WatchReport] | None:
        """Start watching a kind (holding `lease`, an owner token already claimed, if given);
        the future gives the watch's last report when it ends. A kind watched here already
        takes over the new lease (its old one lapsed and was claimed again). None when the hub
        is full or stopped: the lease then stays with the caller."""
        key = (cluster_id, kind)
        with self._lock:
            if self._stopped or (key not in self._tasks and not self._has_room(cluster_id)):
                return None
            if key in self._tasks:
                if lease is None:
                    return None
                self._leases[key] = lease
                self._loop.call_soon_threadsafe(self._adopt, key, lease)
                return self._reports[key]
            self._tasks[key] = None  # reserved until the loop creates its task
            self._leases[key] = lease
            report = self._reports[key] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._spawn, key, deadline, retry_errors, report)
        return report

    def new_owner(self) -> str:
        """A lease owner token that names this hub (a hub that stops announcing loses them)."""
        return hub_owner(self.share_as) if self.share_as is not None else f"task:{uuid.uuid4().hex}"

    def _has_room(self, cluster_id: int) -> bool:
        """Room for one more watch of this cluster (called under the lock)."""
        if len(self._tasks) >= self.capacity:
            return False
        clusters = {held for held, _ in self._tasks}
        return cluster_id in clusters or len(clusters) < self.share

    async def _balance(self, hub_id: str) -> None:
        """Every sixth of a lease: announce this hub, learn its share, give back the excess or
        take idle clusters up to the share (a watch task refused by a full hub lands here)."""
        while True:
            try:
                # Not behind the watches' database calls nor host name lookups: a busy hub still counts.
                hubs = await self._loop.run_in_executor(self._announcer, hubs_announce, hub_id)
                self.share = fair_share(await self.db(live_clusters_count), len(hubs.running))
                await self._shed()
                await self._take_idle(hubs.running if hubs.sure else None)
            except (redis.RedisError, DatabaseError) as error:  # keep the last share meanwhile
                logger.warning("watch hub: could not announce itself or learn its share: %s", error)
            except Exception:  # the balancer outlives any one round: without it no cluster moves here
                logger.exception("watch hub: balancing failed; trying again in %s s", announce_period())
            await asyncio.sleep(announce_period())

    async def _shed(self) -> None:
        """Stop the watches of the clusters beyond this hub's share and give back their leases
        at once, so that the next ensure_watches tick hands them to a hub with room."""
        with self._lock:
            kinds = Counter(cluster_id for cluster_id, _ in self._tasks)
            clusters = sorted(kinds)
            excess = set(clusters[int(min(self.share, len(clusters))) :])
            if len(clusters) >= self.share:
                # A cluster whose other kinds another hub holds (two claimers met) is given back
                # too, so that its kinds come together again, and no cluster waits for a hub with room.
                excess |= {cluster_id for cluster_id, count in kinds.items() if count < len(Kind.values)}
            keys = [key for key, task in self._tasks.items() if key[0] in excess and task is not None]
            # Popped here, so that the watches' own endings leave the leases to _give_back.
            leases = {key: self._leases.pop(key, None) for key in keys}
            tasks = [self._tasks[key] for key in keys]
        if not tasks:
            return
        logger.info("watch hub: giving back %d clusters beyond its share of %s", len(excess), self.share)
        for task in tasks:
            if task is not None:
                task.cancel()
        await asyncio.gather(*(task for task in tasks if task is not None), return_exceptions=True)
        await self.db(_give_back, leases)

    async def _take_idle(self, alive: frozenset[str] | None) -> None:
        """Take whole idle clusters up to the share, those of hubs no longer `alive` included (so
        a killed worker's clusters move within the lease; None: not sure which hubs run, so
        only lapsed leases), and the idle kinds of clusters held here."""
        with self._lock:
            room = max(0, int(self.share - len({cluster_id for cluster_id, _ in self._tasks})))
        claims = await self.db(watches_claim_idle, room, hub=self.share_as, alive=alive)
        if claims:
            logger.info("watch hub: taking %d idle watches (share %s)", len(claims), self.share)
        for claim in claims:
            if self.hold(claim.cluster_id, claim.kind, lease=claim.owner) is None:
                await self.db(watch_claim_release, claim)

    def _adopt(self, key: Key, lease: str) -> None:
        if (watch := self._watches.get(key)) is not None:
            watch.lease = lease

    def _spawn(self, key: Key, deadline: float, retry_errors: bool, report: concurrent.futures.Future[Any]) -> None:
        task = self._loop.create_task(self._hold(key, deadline, retry_errors), name=f"watch {key}")
        task.add_done_callback(functools.partial(_copy_result, into=report))
        with self._lock:
            self._tasks[key] = task

    async def db(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await self._loop.run_in_executor(self.executor, functools.partial(fn, *args, **kwargs))

    async def _hold(self, key: Key, deadline: float, retry_errors: bool) -> WatchReport:
        cluster_id, kind = key
        report = WatchReport(kind, ended="cluster gone")
        cluster = None
        try:
            cluster = await self.db(_live_cluster, cluster_id)
            while cluster is not None:
                api = self._clients.use(cluster)
                try:
                    lease = self._leases[key]
                    watch = self._watches[key] = KindWatch(
                        cluster, kind, db=self.db, api=api, deadline=deadline, lease=lease, on_event=self.on_event
                    )
                    report = await watch.run()
                finally:
                    await self._clients.release(cluster)
                if report.ended != "error" or not retry_errors:
                    break
                await asyncio.sleep(settings.OME_WATCH_BACKOFF_MAX)
                cluster = await self.db(_live_cluster, cluster_id)
        except asyncio.CancelledError:
            report.ended = "stopped"
        except Exception as error:
            logger.exception("cluster %s %s: watch crashed", cluster or cluster_id, kind)
            self.failures.append(error)
            report.ended, report.error = "crashed", None
        finally:
            with self._lock:
                lease = self._leases.pop(key, None)
                self._tasks.pop(key, None)
                self._reports.pop(key, None)
                self._watches.pop(key, None)
            if lease is not None and not self._stopped:  # else _stop_all releases them all at once
                await asyncio.shield(self.db(_release, cluster_id, kind, lease))
        return report

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every watch (they give back their leases) and the loop; idempotent."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
        if self._renewer is not None:
            self._renewer.stop(timeout)
        if not self._thread.is_alive():
            return
        with self._lock:
            held = dict(self._leases)
        finished = asyncio.run_coroutine_threadsafe(self._stop_all(), self._loop)
        if isinstance(self.executor, CallerThread):
            self.executor.run_until(finished.done, timeout)
        try:
            finished.result(timeout)
        except (concurrent.futures.TimeoutError, asyncio.CancelledError):
            # A busy machine: the watches did not wind down in time. Say they are gone anyway,
            # from this thread, before the process exits still marked "connected".
            logger.warning("watch hub: watches did not stop within %s s; giving their leases back", timeout)
            _with_fresh_connection(_give_back, held)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout)

    async def _stop_all(self) -> None:
        if self._balancer is not None:
            self._balancer.cancel()
            with contextlib.suppress(redis.RedisError):
                await self.db(hubs_withdraw, self.share_as)
        with self._lock:
            tasks = [task for task in self._tasks.values() if task is not None]
            held = dict(self._leases)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self.db(_give_back, held)
        await self._loop.shutdown_default_executor()
        self._announcer.shutdown(wait=False)


def _give_back(held: dict[Key, str | None]) -> None:
    """Mark every watch of a stopping hub disconnected and release its lease, in a few queries
    (a worker stopping with hundreds of watches must not queue a call per watch)."""
    owners = sorted({lease for lease in held.values() if lease is not None})
    for start in range(0, len(owners), 500):
        watch_lost(
            SyncState.objects.filter(watch_owner__in=owners[start : start + 500]),
            watch_owner="",
            watch_lease_until=None,
        )
    for cluster_id, kind in (key for key, lease in held.items() if lease is None):
        watch_lost(SyncState.objects.filter(cluster_id=cluster_id, kind=kind))


def _release(cluster_id: int, kind: str, owner: str) -> None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is not None:
        watch_lease_release(cluster, kind, owner=owner)


def _copy_result(task: asyncio.Task[WatchReport], *, into: concurrent.futures.Future[WatchReport]) -> None:
    if task.cancelled():
        into.cancel()
    elif (error := task.exception()) is not None:
        into.set_exception(error)
    else:
        into.set_result(task.result())
