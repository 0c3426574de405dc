"""Celery tasks of the inventory: thin wrappers that load by id and call inventory.live.

Beat runs `resync_all` every OME_RESYNC_INTERVAL and `ensure_watches` every half lease (see
CELERY_BEAT_SCHEDULE). Watch tasks go to the `watch` queue (CELERY_TASK_ROUTES); each hands its
watch to the watch hub of the worker process that runs it (inventory.live.hub), which holds it
until the worker stops or the lease is lost.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
import threading
import uuid
from typing import Any

from celery import Task, current_app, shared_task
from celery.concurrency.thread import TaskPool as ThreadTaskPool
from celery.exceptions import TimeoutError as CeleryTimeout
from celery.signals import worker_process_shutdown, worker_ready, worker_shutting_down
from django.conf import settings
from kombu.exceptions import OperationalError

from .argocd import argocd_clusters_sync
from .kube import KubeUnavailable
from .live.hub import DatabaseThreads, WatchHub
from .live.leases import (
    live_clusters_count,
    watch_claim_release,
    watch_lease_release,
    watch_leases_claim,
    watch_leases_hand_over,
    watches_claim_idle,
)
from .live.resync import cluster_resync
from .models import Cluster, Kind
from .registration import ConnectionTest, connection_test
from .services import ClusterSpec
from .sources import live_source_keys

logger = logging.getLogger(__name__)

# The queue of the watch tasks (also routed there by CELERY_TASK_ROUTES); give it its own workers.
WATCH_QUEUE = "watch"

_hub: WatchHub | None = None
_hub_lock = threading.Lock()


def watch_hub() -> WatchHub:
    """This process's watch hub, started on first use (in the worker process that runs watches,
    never before a fork)."""
    global _hub
    with _hub_lock:
        if _hub is None:
            # host:pid, and a random part: a restarted container keeps its host name and often its
            # pid, and must not pass for the dead process, whose leases are then taken at once.
            hub_id = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
            _hub = WatchHub(DatabaseThreads(settings.OME_WATCH_DB_THREADS), share_as=hub_id).start()
        return _hub


@worker_ready.connect
def _start_watch_hub(sender: Any, **_: Any) -> None:
    """A watch worker's hub starts with the worker and announces itself, so that the worker gets
    its share of the clusters even when every lease is held (inventory.live.shares)."""
    consumes = {queue.name for queue in sender.task_consumer.queues}
    if WATCH_QUEUE in consumes and isinstance(sender.pool, ThreadTaskPool):  # watches run in this process
        watch_hub()


@worker_shutting_down.connect
@worker_process_shutdown.connect
def _stop_watches(**_: Any) -> None:
    """A warm shutdown ends the watches at once and gives their leases back, so that another
    worker's hub takes them over at its next round without waiting for the leases to lapse."""
    global _hub
    with _hub_lock:
        hub, _hub = _hub, None
    if hub is not None:
        hub.stop()


@shared_task(
    bind=True,
    autoretry_for=(KubeUnavailable,),
    retry_backoff=True,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=3,
)
def resync_cluster(self: Task, cluster_id: int, kind: str | None = None) -> dict[str, Any]:
    """List every kind (or `kind`) of one cluster and store it; retried while the server is down."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return {"cluster": None}
    result = cluster_resync(cluster, kinds=[kind] if kind else None)
    if error := result.transient_error():
        raise error
    return {
        "cluster": cluster.name,
        "counts": {k: vars(counts) for k, counts in result.applied.counts.items()},
        "errors": {k: error.message for k, error in result.errors.items()},
        "manifest_errors": result.manifest_errors,
    }


@shared_task
def resync_all() -> int:
    """Enqueue a resync of every live cluster (beat). A manifest cluster is a snapshot: it is
    reloaded on request only, so a patch applied to its stored objects is not reverted behind
    the user's back."""
    cluster_ids = list(Cluster.objects.filter(source__in=live_source_keys()).values_list("pk", flat=True))
    for cluster_id in cluster_ids:
        # Not run before the next beat tick: that one enqueues a fresh resync anyway.
        resync_cluster.apply_async((cluster_id,), expires=settings.OME_RESYNC_INTERVAL * 0.9)
    return len(cluster_ids)


def _waiting_in(queue: str) -> int:
    """How many messages wait in a broker queue (0 when the queue does not exist yet)."""
    with current_app.connection_for_write() as connection:
        try:
            # The stub types the channel as kombu's abstract StdChannel; Redis' channel declares queues.
            channel: Any = connection.default_channel
            return int(channel.queue_declare(queue=queue, passive=True).message_count)
        except connection.channel_errors:
            return 0


@shared_task
def ensure_watches() -> int:
    """Start the watches of every live cluster that nobody watches, claimed whole (beat): one
    watch_cluster task per cluster. Returns how many kinds were claimed. The hubs take idle
    clusters themselves too (inventory.live.hub); this is the fallback that needs no hub."""
    claims = watches_claim_idle()
    waiting = _waiting_in(WATCH_QUEUE)
    if claims and waiting >= live_clusters_count():
        # A tick's worth of watches still waits: no worker consumes the queue (or too few). The
        # broker drops expired messages only when a worker reads them, so do not add more.
        logger.warning("%d watch tasks wait in the %r queue; is a worker consuming it?", waiting, WATCH_QUEUE)
        for claim in claims:
            watch_claim_release(claim)
        return 0
    leases: dict[int, dict[str, str]] = {}
    for claim in claims:
        leases.setdefault(claim.cluster_id, {})[claim.kind] = claim.owner
    for cluster_id, kinds in leases.items():
        # A watch not started within its lease expires in the queue, and the lease with it; the
        # next tick claims again.
        watch_cluster.apply_async((cluster_id, kinds), queue=WATCH_QUEUE, expires=settings.OME_WATCH_LEASE)
    return len(claims)


@shared_task(bind=True)
def watch_cluster(self: Task, cluster_id: int, leases: dict[str, str] | None = None) -> dict[str, Any]:
    """Hand the watches of a cluster's kinds to this worker's watch hub, which holds them.

    `leases` maps each kind to the owner token ensure_watches claimed for it, handed over to the
    hub's name here; without it the task claims the cluster whole itself. Returns at once, with
    the kinds held here.
    """
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None or not cluster.is_live:
        return {"held": [], "why": "nothing to watch"}
    hub = watch_hub()
    if leases is None:
        owners = {kind: hub.new_owner() for kind in Kind.values}
        leases = {kind: owners[kind] for kind in watch_leases_claim(cluster, owners, whole=True)}
    else:  # under the hub's name, so that its leases move at once if this worker dies
        leases = watch_leases_hand_over(cluster, {k: v for k, v in leases.items() if k in Kind.values}, hub.new_owner)
    held = []
    for kind, owner in leases.items():
        if hub.hold(cluster_id, kind, lease=owner) is not None:
            held.append(kind)
        else:  # full, or stopping
            watch_lease_release(cluster, kind, owner=owner)
    return {"held": held}


@shared_task
def argocd_discover() -> dict[str, list[str]]:
    """Register the clusters of Argo CD's cluster Secrets (beat, when OME_ARGOCD_HUB is set),
    and sync each new one now; ensure_watches then watches it."""
    found = argocd_clusters_sync()
    for cluster_id in Cluster.objects.filter(name__in=found.added).values_list("pk", flat=True):
        resync_cluster.delay(cluster_id)
    return vars(found)


@shared_task
def cluster_connection_test(spec: dict[str, Any]) -> dict[str, Any]:
    """The add-cluster page's connection test, in a worker: building a client may run an exec
    plugin an Argo CD Secret names (inventory.kube.exec_plugins), never in the web process."""
    found = connection_test(ClusterSpec(**{**spec, "manifests": tuple(spec.get("manifests") or ())}))
    return dataclasses.asdict(found)


def connection_test_in_worker(spec: ClusterSpec) -> ConnectionTest:
    """Run the connection test on a worker and wait for it, at most OME_CONNECTION_TEST_TIMEOUT
    seconds; no answer in time (no worker, Redis away) is the test's error, saying so."""
    try:
        limit = settings.OME_CONNECTION_TEST_TIMEOUT
        answer = cluster_connection_test.apply_async((dataclasses.asdict(spec),), ignore_result=False, expires=limit)
        found = answer.get(timeout=limit)
    except (OperationalError, ConnectionError, TimeoutError, CeleryTimeout):
        limit = settings.OME_CONNECTION_TEST_TIMEOUT
        return ConnectionTest(error=f"no worker ran the connection test within {limit} s; try again when one runs")
    return ConnectionTest(**{**found, "kinds": found["kinds"], "notes": tuple(found["notes"])})
