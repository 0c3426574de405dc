"""Lease renewal on a thread and a database connection of its own, ahead of the watches' writes.

Why: a watch renewed its lease between its batches, through the hub's database threads. Under a
burst those threads are busy storing batches (a batch may also wait for the cluster's lock
behind a matrix update), so the renewal came late, the lease lapsed, the hub's own balancer
claimed the idle kinds again, and every watch of the cluster listed again: a lone worker lost
its only cluster to its own write load (issue 36, inventory level 91 s after the last change of
a burst). The renewer renews every lease its hub holds, in one statement, every sixth of a
lease, whatever the batches do; each watch still checks its own lease (a forced claim ends it).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection

from .leases import watch_leases_renew

logger = logging.getLogger(__name__)


def renew_period() -> float:
    return settings.OME_WATCH_LEASE / 6


class LeaseRenewer:
    """Renews the leases `held()` names until stopped, on a thread of its own."""

    def __init__(self, held: Callable[[], Collection[str]]) -> None:
        self._held = held
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="watch-renew", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            while not self._stopping.wait(renew_period()):
                try:
                    close_old_connections()  # a connection the database dropped is replaced
                    watch_leases_renew(self._held())
                except DatabaseError as error:  # the watches' own renewals go on meanwhile
                    logger.warning("watch hub: could not renew its leases: %s", error)
        finally:
            connection.close()
