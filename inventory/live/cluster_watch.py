"""Watches held by the calling thread (manage.py sync_cluster, tests): a watch hub whose database
calls run in the caller's thread, so that they use its database connection and transaction."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence

from ..models import Cluster, Kind
from .hub import CallerThread, WatchHub
from .leases import watch_lease_claim
from .watch import WatchEvent, WatchReport


def kind_watch(
    cluster: Cluster,
    kind: str,
    *,
    stop: threading.Event,
    deadline: float,
    lease: str | None = None,
    on_event: Callable[[WatchEvent], None] | None = None,
) -> WatchReport:
    """Watch one kind (see watch.KindWatch) until `stop` is set, `deadline` (a time.monotonic()
    value) passes or the watch ends; returns its report."""
    database = CallerThread()
    hub = WatchHub(database, on_event=on_event, name=f"watch {cluster.name} {kind}").start()
    try:
        report = hub.hold(cluster.pk, kind, lease=lease, deadline=deadline, retry_errors=False)
        if report is None:  # a new hub has room for one watch: only a broken hub refuses it
            raise RuntimeError(f"cluster {cluster.name} {kind}: a new watch hub refused to hold the watch")
        database.run_until(lambda: report.done() or stop.is_set())
    finally:
        hub.stop()
    return report.result()


def cluster_watch(
    cluster: Cluster,
    *,
    stop: threading.Event,
    kinds: Sequence[str] | None = None,
    on_event: Callable[[WatchEvent], None] | None = None,
) -> None:
    """Watch every kind (or `kinds`) of a cluster until `stop` is set.

    Takes the watch leases by force (so beat's ensure_watches stands aside) and gives them back
    at the end. A kind whose lease another watcher takes stops; if a watch crashes, the others
    are stopped and its exception is raised.
    """
    owner = f"sync_cluster:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    database = CallerThread()
    hub = WatchHub(database, on_event=on_event, name=f"watch {cluster.name}").start()
    try:
        for kind in kinds or Kind.values:
            watch_lease_claim(cluster, kind, owner=owner, force=True)
            hub.hold(cluster.pk, kind, lease=owner)
        database.run_until(lambda: stop.is_set() or bool(hub.failures) or not hub.held())
    finally:
        hub.stop()
    if hub.failures:
        raise hub.failures[0]
