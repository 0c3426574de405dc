"""The one lock order of the writers of a cluster's inventory and matrix.

Every transaction that writes a cluster's objects or matrix rows (a watch's batch, a list, a
matrix update or catch-up, a build's chunk, a patch storing what it changed) takes the
cluster's row lock first, before any other row. Writers of one cluster then queue on that lock instead of taking row locks in different
orders (a watch deleting a model while a matrix update inserts rows that reference it), which
is how PostgreSQL's "deadlock detected" came about under bursts. FOR NO KEY UPDATE: rows that
reference the cluster (a new object, a new matrix row) can still be inserted meanwhile.

A lease claim does not queue (`cluster_write_lock_or_skip`): a claim round that met a cluster
locked by a frozen holder would wait on it, and claim none of the clusters after it. A frozen
holder's lock itself lasts no longer than OME_DB_IDLE_TRANSACTION_TIMEOUT (core.db).
SQLite has no row locks: its IMMEDIATE transactions already write one at a time, and a writer
waits for the one writing at most its busy timeout (SQLITE_OPTIONS), then fails and is retried.
"""

from __future__ import annotations

from django.db import connection

from .models import Cluster


def cluster_write_lock(cluster_id: int) -> None:
    """Lock the cluster's row until the surrounding transaction ends (first thing in it)."""
    if connection.features.has_select_for_update:
        list(Cluster.objects.select_for_update(no_key=True).filter(pk=cluster_id).values_list("pk", flat=True))


def cluster_write_lock_or_skip(cluster_id: int) -> bool:
    """Lock the cluster's row as `cluster_write_lock` does, unless another transaction holds it:
    False then, at once (SKIP LOCKED), instead of waiting for it."""
    if not connection.features.has_select_for_update_skip_locked:
        return True
    locked = Cluster.objects.select_for_update(no_key=True, skip_locked=True).filter(pk=cluster_id)
    return bool(list(locked.values_list("pk", flat=True)))  # empty too when the cluster is gone
