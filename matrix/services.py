"""Building the matrix and keeping it level with the inventory (see matrix.updates)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from core.db import retried_transaction
from core.redact import redact
from inventory.locks import cluster_write_lock
from inventory.models import Cluster
from inventory.parsed import load_inventory
from matching import ObjectKey

from .cell_changes import record_build_history
from .models import MatrixBuild, MatrixRow
from .rows import compute_rows
from .selectors import current_build
from .signals import matrix_updated
from .updates import inventory_version, matrix_level, matrix_staleness, ome_behaviour_label, scope_digest

logger = logging.getLogger(__name__)


def _chunks(items: Sequence[ObjectKey], size: int) -> list[list[ObjectKey]]:
    return [list(items[start : start + size]) for start in range(0, len(items), size)] or [[]]


def matrix_build_start(cluster: Cluster, *, chunk_size: int | None = None) -> tuple[MatrixBuild, list[list[int]]]:
    """Open a build and split its models into chunks (lists of model resource ids)."""
    # Read before the inventory (matrix.updates): what changes later is caught when it finishes.
    version, digest = inventory_version(cluster), scope_digest(cluster)
    inventory = load_inventory(cluster)
    size = chunk_size or settings.MATRIX_CHUNK_MODELS
    chunks = _chunks(inventory.model_keys, size)
    build = MatrixBuild.objects.create(
        cluster=cluster,
        ome_behaviour=ome_behaviour_label(inventory.behaviour),
        chunks=len(chunks),
        models_count=len(inventory.model_keys),
        runtimes_count=len(inventory.runtimes),
        applied_version=version,
        scope_digest=digest,
    )
    return build, [[inventory.ids[key] for key in chunk] for chunk in chunks]


def matrix_build_chunk(build_id: int, model_ids: Iterable[int]) -> int:
    """Compute and store the rows of some models; they stay invisible until the build finishes."""
    build = MatrixBuild.objects.select_related("cluster").get(pk=build_id)
    if build.status != MatrixBuild.Status.RUNNING:
        return 0
    version = inventory_version(build.cluster)
    inventory = load_inventory(build.cluster)
    wanted = set(model_ids)
    keys = [key for key in inventory.model_keys if inventory.ids[key] in wanted]
    rows = [
        row.as_row(build_id=build.pk, cluster_id=build.cluster_id, inventory_version=version)
        for row in compute_rows(inventory, keys)
    ]
    _store_chunk(build, rows)
    return len(rows)


@retried_transaction
def _store_chunk(build: MatrixBuild, rows: list[MatrixRow]) -> None:
    with transaction.atomic():
        cluster_write_lock(build.cluster_id)
        MatrixRow.objects.bulk_create(rows, batch_size=1000)
        MatrixBuild.objects.filter(pk=build.pk).update(chunks_done=F("chunks_done") + 1)


def matrix_build_finish(build_id: int) -> MatrixBuild:
    """Publish a build: it becomes current, history is recorded against the one it replaces,
    older builds are deleted. Then whatever changed while it ran is levelled at once."""
    build = MatrixBuild.objects.select_related("cluster").get(pk=build_id)
    if build.status != MatrixBuild.Status.RUNNING:
        return build  # failed meanwhile (abandoned): its rows are gone, it must not be published
    previous = current_build(build.cluster)
    with transaction.atomic():
        cluster_write_lock(build.cluster_id)
        if not MatrixBuild.objects.filter(pk=build.pk, status=MatrixBuild.Status.RUNNING).exists():
            build.refresh_from_db()
            return build  # abandoned since the look above: as failed as then
        build.status = MatrixBuild.Status.SUCCEEDED
        build.finished_at = timezone.now()
        build.duration_ms = int((build.finished_at - build.started_at).total_seconds() * 1000)
        build.rows_count = MatrixRow.objects.filter(build=build).count()
        build.save()
        if previous is not None:
            record_build_history(build.cluster, previous, build)
        MatrixBuild.objects.filter(cluster=build.cluster).exclude(pk=build.pk).exclude(
            status=MatrixBuild.Status.RUNNING
        ).delete()
    matrix_level(build.cluster, build)
    matrix_updated.send(sender=None, cluster=build.cluster, cluster_id=build.cluster_id, causes=[])
    build.refresh_from_db()
    return build


def matrix_build_fail(build_id: int, error: str) -> None:
    """A failed build is dropped; the previous one stays current. Only a running build fails:
    one published meanwhile (its worker was slow, not dead) is the current matrix and stays."""
    cluster_id = MatrixBuild.objects.filter(pk=build_id).values_list("cluster_id", flat=True).first()
    if cluster_id is None:
        return
    with transaction.atomic():
        cluster_write_lock(cluster_id)
        running = MatrixBuild.objects.filter(pk=build_id, status=MatrixBuild.Status.RUNNING)
        if running.update(status=MatrixBuild.Status.FAILED, error=redact(error)[:2000], finished_at=timezone.now()):
            MatrixRow.objects.filter(build_id=build_id).delete()


def matrix_rebuild(cluster: Cluster, *, chunk_size: int | None = None) -> MatrixBuild:
    """A full recompute in this process, chunk after chunk (the tasks spread the chunks)."""
    started = time.perf_counter()
    build, chunks = matrix_build_start(cluster, chunk_size=chunk_size)
    try:
        for chunk in chunks:
            matrix_build_chunk(build.pk, chunk)
    except Exception as error:
        matrix_build_fail(build.pk, f"{type(error).__name__}: {error}")
        raise
    build = matrix_build_finish(build.pk)
    logger.info(
        "cluster %s: matrix rebuilt in %.2f s (%d rows)", cluster, time.perf_counter() - started, build.rows_count
    )
    return build


def matrix_apply_changes(cluster: Cluster, changes: list[dict[str, Any]]) -> int | None:
    """Bring the current matrix level with the inventory (matrix.updates: every stale row, not
    only those of `changes`, which name the cause in the history). Builds the first matrix of a
    cluster that has none (-1). Returns the rows written, None when it was level already."""
    build = current_build(cluster)
    if build is None:
        matrix_rebuild(cluster)
        return -1
    written = matrix_level(cluster, build, cause=changes)
    if written is not None:
        matrix_updated.send(sender=None, cluster=cluster, cluster_id=cluster.pk, causes=changes)
    return written


def matrix_catch_up(cluster: Cluster) -> int | None:
    """Level the matrix if an update was lost (a broker outage, a killed worker), verifying
    every row's stamp: None if it was level already, else the rows written."""
    return matrix_apply_changes(cluster, [])


def matrix_is_level(cluster: Cluster) -> bool:
    """True when the current matrix holds every change of the inventory (checked row by row)."""
    build = current_build(cluster)
    return build is not None and matrix_staleness(cluster, build).level


def matrix_builds_abandon(cluster: Cluster, *, older_than: timedelta) -> int:
    """Fail the builds still running after `older_than` (their worker died): their rows go, the
    current build stays. Returns how many; the caller queues the rebuild again."""
    stale = MatrixBuild.objects.filter(
        cluster=cluster, status=MatrixBuild.Status.RUNNING, started_at__lt=timezone.now() - older_than
    )
    ids = list(stale.values_list("pk", flat=True))
    for build_id in ids:
        matrix_build_fail(build_id, f"abandoned: still running after {older_than}")
    return len(ids)
