"""Matrix rows computed from an inventory: what OME would pick for each model in each namespace."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from inventory.parsed import Inventory
from matching import ObjectKey, model_error

from .cells import Manual, Ranked, row_statuses
from .models import MatrixRow


@dataclass(frozen=True)
class RowData:
    model_id: int
    namespace: str
    outcome: str
    selected_id: int | None = None
    selected_score: int | None = None
    # cells.Ranked as lists, best first: runtimes OME can auto-select.
    compatible: list[list[object]] = field(default_factory=list)
    # cells.Manual as lists: compatible, but not auto-selectable.
    manual: list[list[str]] = field(default_factory=list)
    invalid_reason: str = ""

    @property
    def identity(self) -> tuple[int, str]:
        return (self.model_id, self.namespace)

    @classmethod
    def from_row(cls, row: MatrixRow) -> RowData:
        return cls(
            model_id=row.model_id,
            namespace=row.namespace,
            outcome=row.outcome,
            selected_id=row.selected_id,
            selected_score=row.selected_score,
            compatible=[list(item) for item in row.compatible],
            manual=[list(item) for item in row.manual],
            invalid_reason=row.invalid_reason,
        )

    def as_row(self, *, build_id: int, cluster_id: int, inventory_version: int) -> MatrixRow:
        return MatrixRow(
            build_id=build_id,
            cluster_id=cluster_id,
            inventory_version=inventory_version,
            model_id=self.model_id,
            namespace=self.namespace,
            outcome=self.outcome,
            selected_id=self.selected_id,
            selected_score=self.selected_score,
            compatible=self.compatible,
            manual=self.manual,
            invalid_reason=self.invalid_reason,
        )

    def statuses(self) -> dict[ObjectKey, str]:
        return row_statuses(self.compatible, self.manual)


def compute_row(inventory: Inventory, model_key: ObjectKey, namespace: str) -> RowData:
    """The row of one model (valid or malformed) in one namespace, which need not be one of
    `namespaces_for` the model (what-if compares rows that exist in one view only)."""
    model_id = inventory.ids[model_key]
    if model_key in inventory.invalid:
        return RowData(model_id, namespace, MatrixRow.Outcome.INVALID, invalid_reason=inventory.invalid[model_key])
    error = model_error(inventory.models[model_key])
    if error is not None:
        return RowData(model_id, namespace, MatrixRow.Outcome.INVALID, invalid_reason=error)
    selection = inventory.grid.select(model_key, namespace)
    ranked: list[list[object]] = [
        list(Ranked(*match.key, match.score, match.entry or 0)) for match in selection.compatible
    ]
    manual = [list(Manual(*key, reason)) for key, reason in sorted(selection.manual_keys.items())]
    if not selection.compatible:
        return RowData(model_id, namespace, MatrixRow.Outcome.NO_RUNTIME, manual=manual)
    best = selection.compatible[0]
    return RowData(
        model_id,
        namespace,
        MatrixRow.Outcome.SELECTED,
        selected_id=inventory.ids[best.key],
        selected_score=best.score,
        compatible=ranked,
        manual=manual,
    )


def compute_rows(inventory: Inventory, model_keys: Iterable[ObjectKey]) -> list[RowData]:
    return [compute_row(inventory, key, namespace) for key in model_keys for namespace in inventory.namespaces_for(key)]
