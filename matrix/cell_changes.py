"""Recording the matrix history: which cells changed status, and because of which change (the
history page reads them through matrix.history)."""

from __future__ import annotations

from typing import Any

from inventory.models import Cluster
from inventory.parsed import Inventory, load_inventory
from matching import ObjectKey

from .models import CellChange, CellStatus, MatrixBuild, MatrixRow
from .rows import RowData

Statuses = dict[tuple[int, str], dict[ObjectKey, str]]


def row_statuses(rows: list[RowData]) -> Statuses:
    return {row.identity: row.statuses() for row in rows}


def cell_changes(
    cluster: Cluster, inventory: Inventory, before: Statuses, after: Statuses, cause: list[dict[str, Any]]
) -> list[CellChange]:
    """One CellChange per cell of a row present before and after whose status differs."""
    disabled = {key for key, rt in inventory.runtimes.items() if rt.is_disabled}
    changes = []
    for identity in set(before) & set(after):
        old, new = before[identity], after[identity]
        model_key = inventory.keys.get(identity[0])
        if model_key is None:
            continue
        for runtime_key in set(old) | set(new):
            old_status = old.get(runtime_key, CellStatus.EXCLUDED.value)
            fallback = CellStatus.DISABLED if runtime_key in disabled else CellStatus.EXCLUDED
            new_status = new.get(runtime_key, fallback.value)
            if old_status == new_status:
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


def record_build_history(cluster: Cluster, previous: MatrixBuild, build: MatrixBuild) -> None:
    """The cells a full build changed against the build it replaces (cause: none, a rebuild)."""
    before = row_statuses([RowData.from_row(row) for row in MatrixRow.objects.filter(build=previous)])
    after = row_statuses([RowData.from_row(row) for row in MatrixRow.objects.filter(build=build)])
    inventory = load_inventory(cluster)
    CellChange.objects.bulk_create(cell_changes(cluster, inventory, before, after, []), batch_size=1000)
