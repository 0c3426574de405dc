"""Row and cell diffs between the cluster's inventory and the what-if's overlay.

Each view's row is the matrix's own (`matrix.rows.compute_row`), computed for any namespace:
a namespace without ServingRuntimes gives the cluster-scope selection.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from inventory.parsed import Inventory
from matching import ObjectKey
from matrix.cells import ranked_of
from matrix.models import CellStatus, MatrixRow
from matrix.rows import RowData, compute_row

from .results import CellDiff, RowDiff

# A cell "matches" when OME could use the runtime for the model: ranked or usable by name.
MATCHING = frozenset({CellStatus.SELECTED.value, CellStatus.COMPATIBLE.value, CellStatus.MANUAL_ONLY.value})
_NOT_MATCHING = frozenset({None, CellStatus.EXCLUDED.value, CellStatus.DISABLED.value})

Cell = tuple[str | None, int | None, int | None]
"""A cell's status, score and rank; None where the cell does not exist or has no rank."""


@dataclass(frozen=True)
class RowState:
    """One (model, namespace) row of one view; `row` is None where the model does not exist."""

    exists: bool
    row: RowData | None
    cells: dict[ObjectKey, Cell]

    @property
    def outcome(self) -> str | None:
        return None if self.row is None else self.row.outcome

    @property
    def selected(self) -> ObjectKey | None:
        return ranked_of(self.row.compatible)[0].key if self.row is not None and self.row.compatible else None

    @property
    def score(self) -> int | None:
        return None if self.row is None else self.row.selected_score


Rows = dict[tuple[tuple[object, ...], str], tuple[RowData, dict[ObjectKey, Cell]]]
"""(model signature, namespace) -> the row and cells of a valid model in one view. A valid
model's row depends on the model only through its signature (as the grid's verdicts, scores
and texts do) and its id, so models of one signature share it (and the what-ifs of a model's
fixes share the unchanged inventory's)."""


def row_state(inventory: Inventory, model_key: ObjectKey, namespace: str, rows: Rows | None = None) -> RowState:
    """The row as the matrix would store it, and whether the matrix has it; `rows` holds the
    rows of this view computed before."""
    if model_key not in inventory.models and model_key not in inventory.invalid:
        return RowState(False, None, {})
    exists = namespace in inventory.namespaces_for(model_key)
    model = inventory.models.get(model_key)
    if rows is None or model is None:
        return RowState(exists, *_row_and_cells(inventory, model_key, namespace))
    shared = rows.get((model.signature, namespace))
    if shared is None:
        shared = rows[model.signature, namespace] = _row_and_cells(inventory, model_key, namespace)
    row, cells = shared
    model_id = inventory.ids[model_key]
    return RowState(exists, row if row.model_id == model_id else dataclasses.replace(row, model_id=model_id), cells)


def _row_and_cells(inventory: Inventory, model_key: ObjectKey, namespace: str) -> tuple[RowData, dict[ObjectKey, Cell]]:
    row = compute_row(inventory, model_key, namespace)
    cells: dict[ObjectKey, Cell] = {key: (status, None, None) for key, status in row.statuses().items()}
    for rank, item in enumerate(ranked_of(row.compatible)):
        cells[item.key] = (cells[item.key][0], item.score, rank)
    return row, cells


def row_error(inventory: Inventory, state: RowState, model_key: ObjectKey, namespace: str) -> str | None:
    """OME's error where no runtime is selected: the model's validation error, or
    NoRuntimeFoundError (which lists every runtime in scope with its reason)."""
    if state.row is None:
        return None
    if state.row.outcome == MatrixRow.Outcome.INVALID:
        return state.row.invalid_reason
    if state.row.outcome == MatrixRow.Outcome.NO_RUNTIME:
        return inventory.grid.select(model_key, namespace).error
    return None


def cell_state(inventory: Inventory, state: RowState, runtime_key: ObjectKey, namespace: str) -> Cell:
    if runtime_key in state.cells:
        return state.cells[runtime_key]
    runtime = inventory.runtimes.get(runtime_key)
    if state.row is None or runtime is None:
        return (None, None, None)
    if not runtime.is_cluster and runtime.namespace != namespace:
        return (None, None, None)
    return (CellStatus.DISABLED.value if runtime.is_disabled else CellStatus.EXCLUDED.value, None, None)


def _reportable(old: str | None, new: str | None) -> bool:
    """A cell that appears or disappears while not matching is not a change worth showing."""
    if old == new:
        return False
    return not ((old is None or new is None) and old in _NOT_MATCHING and new in _NOT_MATCHING)


def diff_row(
    old: Inventory,
    new: Inventory,
    model_key: ObjectKey,
    namespace: str,
    changed_runtimes: Iterable[ObjectKey],
    *,
    with_errors: bool = True,
    rows: tuple[Rows, Rows] | None = None,
) -> RowDiff | None:
    """The row's change, or None. OME's error texts (which list every excluded runtime) are
    computed only when the outcome changes and `with_errors` is set. `rows`: the rows of `old`
    and of `new` computed before (see Rows)."""
    old_rows, new_rows = (None, None) if rows is None else rows
    before, after = row_state(old, model_key, namespace, old_rows), row_state(new, model_key, namespace, new_rows)
    cells = []
    gained, lost = [], []
    for runtime_key in sorted(set(before.cells) | set(after.cells) | set(changed_runtimes)):
        old_status, old_score, old_rank = cell_state(old, before, runtime_key, namespace)
        new_status, new_score, new_rank = cell_state(new, after, runtime_key, namespace)
        if _reportable(old_status, new_status) or (old_status == new_status and old_score != new_score):
            cells.append(CellDiff(runtime_key, old_status, new_status, old_score, new_score, old_rank, new_rank))
        if new_status in MATCHING and old_status not in MATCHING:
            gained.append(runtime_key)
        elif old_status in MATCHING and new_status not in MATCHING:
            lost.append(runtime_key)
    if not cells and before.outcome == after.outcome and before.selected == after.selected:
        return None
    explain = with_errors and before.outcome != after.outcome
    return RowDiff(
        model=model_key,
        namespace=namespace,
        old_outcome=None if before.outcome is None else str(before.outcome),
        new_outcome=None if after.outcome is None else str(after.outcome),
        old_selected=before.selected,
        new_selected=after.selected,
        old_score=before.score,
        new_score=after.score,
        cells=cells,
        gained=gained,
        lost=lost,
        old_error=row_error(old, before, model_key, namespace) if explain else None,
        new_error=row_error(new, after, model_key, namespace) if explain else None,
        old_row=before.exists,
        new_row=after.exists,
    )
