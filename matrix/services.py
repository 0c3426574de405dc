"""Building and updating the matrix, and recording the history of its cells."""

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

from core.redact import redact
from inventory.models import MODEL_KINDS, Cluster
from inventory.parsed import Inventory, inventory_fingerprint, load_inventory
from isvcs.services import isvc_verdicts_refresh
from matching import ObjectKey

from .models import CellChange, CellStatus, MatrixBuild, MatrixRow
from .rows import RowData, compute_rows
from .selectors import current_build

logger = logging.getLogger(__name__)


def ome_behaviour_label(inventory: Inventory) -> str:
    """The profile a build's verdicts follow, as recorded on the build."""
    return f"OME profile {inventory.behaviour.name} ({inventory.behaviour.commit[:8]})"


def _chunks(items: Sequence[ObjectKey], size: int) -> list[list[ObjectKey]]:
    return [list(items[start : start + size]) for start in range(0, len(items), size)] or [[]]


def matrix_build_start(cluster: Cluster, *, chunk_size: int | None = None) -> tuple[MatrixBuild, list[list[int]]]:
    """Open a build and split its models into chunks (lists of model resource ids)."""
    inventory = load_inventory(cluster)
    size = chunk_size or settings.MATRIX_CHUNK_MODELS
    chunks = _chunks(inventory.model_keys, size)
    build = MatrixBuild.objects.create(
        cluster=cluster,
        ome_behaviour=ome_behaviour_label(inventory),
        chunks=len(chunks),
        models_count=len(inventory.model_keys),
        runtimes_count=len(inventory.runtimes),
        fingerprint=inventory.fingerprint,
    )
    return build, [[inventory.ids[key] for key in chunk] for chunk in chunks]


def matrix_build_chunk(build_id: int, model_ids: Iterable[int]) -> int:
    """Compute and store the rows of some models; they stay invisible until the build finishes."""
    build = MatrixBuild.objects.select_related("cluster").get(pk=build_id)
    if build.status != MatrixBuild.Status.RUNNING:
        return 0
    inventory = load_inventory(build.cluster)
    wanted = set(model_ids)
    keys = [key for key in inventory.model_keys if inventory.ids[key] in wanted]
    rows = [row.as_row(build_id=build.pk, cluster_id=build.cluster_id) for row in compute_rows(inventory, keys)]
    with transaction.atomic():
        MatrixRow.objects.bulk_create(rows, batch_size=1000)
        MatrixBuild.objects.filter(pk=build.pk).update(chunks_done=F("chunks_done") + 1)
    return len(rows)


def matrix_build_finish(build_id: int) -> MatrixBuild:
    """Publish a build: it becomes current, history is recorded against the one it replaces,
    older builds are deleted. If the inventory changed while it ran, catch up at once."""
    build = MatrixBuild.objects.select_related("cluster").get(pk=build_id)
    previous = current_build(build.cluster)
    with transaction.atomic():
        build.status = MatrixBuild.Status.SUCCEEDED
        build.finished_at = timezone.now()
        build.duration_ms = int((build.finished_at - build.started_at).total_seconds() * 1000)
        build.rows_count = MatrixRow.objects.filter(build=build).count()
        build.save()
        if previous is not None:
            _record_build_history(build.cluster, previous, build)
        MatrixBuild.objects.filter(cluster=build.cluster).exclude(pk=build.pk).exclude(
            status=MatrixBuild.Status.RUNNING
        ).delete()
    if inventory_fingerprint(build.cluster) != build.fingerprint:
        matrix_apply_changes(build.cluster, EVERYTHING)
    else:
        isvc_verdicts_refresh(build.cluster)
    return build


def matrix_build_fail(build_id: int, error: str) -> None:
    """A failed build is dropped; the previous one stays current."""
    MatrixRow.objects.filter(build_id=build_id).delete()
    MatrixBuild.objects.filter(pk=build_id).update(
        status=MatrixBuild.Status.FAILED, error=redact(error)[:2000], finished_at=timezone.now()
    )


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


def _all_statuses(rows: Iterable[RowData]) -> dict[tuple[int, str], dict[ObjectKey, str]]:
    return {row.identity: row.statuses() for row in rows}


def _history(
    cluster: Cluster,
    inventory: Inventory | None,
    before: dict[tuple[int, str], dict[ObjectKey, str]],
    after: dict[tuple[int, str], dict[ObjectKey, str]],
    model_names: dict[int, ObjectKey],
    cause: list[dict[str, Any]],
) -> list[CellChange]:
    disabled = {key for key, rt in inventory.runtimes.items() if rt.is_disabled} if inventory else set()
    changes = []
    for identity in set(before) | set(after):
        old, new = before.get(identity, {}), after.get(identity, {})
        model_key = model_names.get(identity[0])
        if model_key is None or identity not in after:
            continue
        for runtime_key in set(old) | set(new):
            old_status = old.get(runtime_key, CellStatus.EXCLUDED.value)
            fallback = CellStatus.DISABLED if runtime_key in disabled else CellStatus.EXCLUDED
            new_status = new.get(runtime_key, fallback.value)
            if old_status == new_status or identity not in before:
                continue
            changes.append(
                CellChange(
                    cluster=cluster,
                    model_kind=model_key[0],
                    model_namespace=model_key[1],
                    model_name=model_key[2],
                    runtime_kind=runtime_key[0],
                    runtime_namespace=runtime_key[1],
                    runtime_name=runtime_key[2],
                    namespace=identity[1],
                    old_status=old_status,
                    new_status=new_status,
                    cause=cause,
                )
            )
    return changes


def _record_build_history(cluster: Cluster, previous: MatrixBuild, build: MatrixBuild) -> None:
    before = _all_statuses(RowData.from_row(row) for row in MatrixRow.objects.filter(build=previous))
    after = _all_statuses(RowData.from_row(row) for row in MatrixRow.objects.filter(build=build))
    inventory = load_inventory(cluster)
    CellChange.objects.bulk_create(_history(cluster, inventory, before, after, inventory.keys, []), batch_size=1000)


def _affected_models(inventory: Inventory, changes: list[dict[str, Any]]) -> list[ObjectKey] | None:
    """The models whose rows a change can touch; None means every model."""
    affected = []
    for change in changes:
        kind = change.get("kind")
        if kind not in MODEL_KINDS:
            return None  # a runtime or an InferenceService can change every row (and namespaces)
        affected.append((str(kind), str(change.get("namespace", "")), str(change.get("name", ""))))
    return affected


def matrix_apply_changes(cluster: Cluster, changes: list[dict[str, Any]]) -> int:
    """Recompute the rows that inventory changes touch, store only rows that differ, and record
    the cells whose status changed with the change that caused it. Returns rows written."""
    build = current_build(cluster)
    if build is None:
        matrix_rebuild(cluster)
        return -1
    inventory = load_inventory(cluster)
    affected = _affected_models(inventory, changes)
    keys = inventory.model_keys if affected is None else [key for key in affected if key in inventory.ids]
    fresh = {row.identity: row for row in compute_rows(inventory, keys)}
    stored_rows = MatrixRow.objects.filter(build=build)
    if affected is not None:
        stored_rows = stored_rows.filter(model_id__in=[inventory.ids[key] for key in keys])
    stored = {(row.model_id, row.namespace): row for row in stored_rows}
    old = {identity: RowData.from_row(row) for identity, row in stored.items()}
    written = [row for identity, row in fresh.items() if old.get(identity) != row]
    gone = [stored[identity].pk for identity in stored if identity not in fresh]
    with transaction.atomic():
        MatrixRow.objects.filter(
            pk__in=gone + [stored[r.identity].pk for r in written if r.identity in stored]
        ).delete()
        MatrixRow.objects.bulk_create(
            [row.as_row(build_id=build.pk, cluster_id=cluster.pk) for row in written], batch_size=1000
        )
        history = _history(
            cluster,
            inventory,
            {identity: row.statuses() for identity, row in old.items()},
            {row.identity: row.statuses() for row in written},
            inventory.keys,
            changes,
        )
        CellChange.objects.bulk_create(history, batch_size=1000)
        MatrixBuild.objects.filter(pk=build.pk).update(
            updated_at=timezone.now(),
            rows_count=MatrixRow.objects.filter(build=build).count(),
            fingerprint=inventory.fingerprint,
            ome_behaviour=ome_behaviour_label(inventory),
        )
    isvc_verdicts_refresh(cluster)
    return len(written)


EVERYTHING = [{"kind": "*", "namespace": "", "name": "", "action": "changed"}]


def matrix_catch_up(cluster: Cluster) -> int | None:
    """Bring the matrix level with the inventory if an update was lost (a broker outage, a
    killed worker): recompute every row, store the ones that differ. None if already level."""
    build = current_build(cluster)
    if build is not None and build.fingerprint == inventory_fingerprint(cluster):
        return None
    return matrix_apply_changes(cluster, EVERYTHING)


def matrix_builds_abandon(cluster: Cluster, *, older_than: timedelta) -> int:
    """Fail the builds still running after `older_than` (their worker died): their rows go, the
    current build stays."""
    stale = MatrixBuild.objects.filter(
        cluster=cluster, status=MatrixBuild.Status.RUNNING, started_at__lt=timezone.now() - older_than
    )
    ids = list(stale.values_list("pk", flat=True))
    for build_id in ids:
        matrix_build_fail(build_id, f"abandoned: still running after {older_than}")
    return len(ids)
