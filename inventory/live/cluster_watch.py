"""A long-running watcher of every kind of a cluster, one thread each (manage.py sync_cluster)."""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence

from django.conf import settings
from django.db import connection

from ..models import Cluster, Kind
from .leases import watch_lease_claim, watch_lease_release
from .watch import WatchEvent, kind_watch

logger = logging.getLogger(__name__)


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
