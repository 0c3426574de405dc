"""Matrix rows computed from an inventory: what OME would pick for each model in each namespace."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from inventory.parsed import Inventory
from matching.select import model_error
from matching.types import ObjectKey

from .models import CellStatus, MatrixRow


@dataclass(frozen=True)
class RowData:
    model_id: int
    namespace: str
    outcome: str
    selected_id: int | None = None
    selected_score: int | None = None
    # [[kind, namespace, name, score, entry], ...] best first: runtimes OME can auto-select.
    compatible: list[list[object]] = field(default_factory=list)
    # [[kind, namespace, name, reason], ...]: compatible, but not auto-selectable.
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

    def as_row(self, *, build_id: int, cluster_id: int) -> MatrixRow:
        return MatrixRow(
            build_id=build_id,
            cluster_id=cluster_id,
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


def row_statuses(compatible: list[list[object]], manual: list[list[str]]) -> dict[ObjectKey, str]:
    """Runtime key -> status, for the runtimes of a row that are not simply excluded."""
    found: dict[ObjectKey, str] = {(k, ns, n): CellStatus.MANUAL_ONLY.value for k, ns, n, _reason in manual}
    for rank, (kind, namespace, name, _score, _entry) in enumerate(compatible):
        status = CellStatus.SELECTED if rank == 0 else CellStatus.COMPATIBLE
        found[(str(kind), str(namespace), str(name))] = status.value
    return found


def _row(inventory: Inventory, model_key: ObjectKey, namespace: str) -> RowData:
    model_id = inventory.ids[model_key]
    if model_key in inventory.invalid:
        return RowData(model_id, namespace, MatrixRow.Outcome.INVALID, invalid_reason=inventory.invalid[model_key])
    error = model_error(inventory.models[model_key])
    if error is not None:
        return RowData(model_id, namespace, MatrixRow.Outcome.INVALID, invalid_reason=error)
    selection = inventory.grid.select(model_key, namespace)
    ranked: list[list[object]] = [[*match.key, match.score, match.entry or 0] for match in selection.compatible]
    manual = [[*key, reason] for key, reason in sorted(selection.manual_keys.items())]
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
    return [_row(inventory, key, namespace) for key in model_keys for namespace in inventory.namespaces_for(key)]
