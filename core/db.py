"""Transactions that a concurrent writer may make fail once: retried, a bounded number of times.

Why: the writers of one cluster take its row lock first (inventory.locks), so they do not
deadlock with each other; but PostgreSQL may still end a transaction with a deadlock or a
serialization failure (another writer, an index page split), and SQLite answers "database is
locked" (or "database table is locked" for a shared in-memory database) when a writer waited
longer than its busy timeout. Each of those says only "try again": the transaction did nothing.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import random
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar

from django.db import OperationalError, connection, transaction
from django.db.backends.signals import connection_created

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

RETRY_ATTEMPTS = 5
RETRY_SECONDS = 20.0
# SQLSTATEs: deadlock_detected, serialization_failure.
_RETRIED_SQLSTATES = frozenset({"40P01", "40001"})
_RETRIED_SQLITE = ("database is locked", "database table is locked")


def is_retryable(error: OperationalError) -> bool:
    """True when the database refused the transaction only because of a concurrent one."""
    sqlstate = getattr(error.__cause__, "sqlstate", None)
    if sqlstate in _RETRIED_SQLSTATES:
        return True
    return connection.vendor == "sqlite" and str(error).startswith(_RETRIED_SQLITE)


def retried_transaction(function: Callable[P, R]) -> Callable[P, R]:
    """Run `function` (which opens its own transaction) again when the database refused it for
    a concurrent writer: at least RETRY_ATTEMPTS times in all, and on for up to RETRY_SECONDS
    (a writer holding SQLite's lock may take that long), after short random pauses. Inside an
    outer transaction it runs once: only the outermost transaction can be tried again."""

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        deadline = time.monotonic() + RETRY_SECONDS
        attempt = 0
        while True:
            attempt += 1
            try:
                return function(*args, **kwargs)
            except OperationalError as error:
                if connection.in_atomic_block or not is_retryable(error):
                    raise
                if attempt >= RETRY_ATTEMPTS and time.monotonic() >= deadline:
                    raise
                logger.info("%s: %s; attempt %d", function.__qualname__, error, attempt)
                time.sleep(random.uniform(0.01, 0.05) * 2 ** min(attempt, 4))

    return run


def bound_idle_transactions(seconds: float) -> None:
    """From now on (in place of any bound set before), every new PostgreSQL connection of this
    process ends a transaction left idle for `seconds` (idle_in_transaction_session_timeout): a
    frozen process (SIGSTOP, a VM paused, a swap storm, a hung NFS read) loses its transaction
    and its row locks then, instead of holding them for as long as it is frozen. The process finds its connection closed when it
    resumes and opens another (CONN_HEALTH_CHECKS). 0 turns it off. SQLite has no such bound:
    its one writer at a time holds the database's write lock while frozen, and the others fail
    after their busy timeout and are retried (retried_transaction) until it resumes."""
    milliseconds = str(round(seconds * 1000))

    def bound(sender: object, connection: Any, **_: object) -> None:
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT set_config('idle_in_transaction_session_timeout', %s, false)", [milliseconds])

    connection_created.disconnect(dispatch_uid="bound_idle_transactions")
    connection_created.connect(bound, weak=False, dispatch_uid="bound_idle_transactions")


@contextlib.contextmanager
def one_snapshot() -> Iterator[None]:
    """Reads that see the database at one instant, for answers that judge one thing from several
    queries (a /metrics scrape): on PostgreSQL one read-only REPEATABLE READ transaction; SQLite
    reads outside a transaction (the project's IMMEDIATE ones would hold the write lock
    meanwhile). Either way the caller reads the time once (`database_now`) and judges every row
    by it."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def database_now() -> datetime:
    """The database's clock, which sets the leases (inventory.live.leases), read as Django's
    Now() reads it: PostgreSQL's statement_timestamp(), SQLite's 'now' (UTC)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT statement_timestamp()")
            now: datetime = cursor.fetchone()[0]
            return now
        cursor.execute("SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')")
        return datetime.fromisoformat(cursor.fetchone()[0]).replace(tzinfo=UTC)
