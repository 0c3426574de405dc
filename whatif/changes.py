"""A what-if's changed rows as a person reads them: one line per model and change, with the
namespaces it happens in (a ClusterBaseModel's change in twelve namespaces is one line), and
the reason for the change in words."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from matching import ObjectKey, fold_everywhere, key_dict

from .results import RowDiff, WhatIfResult

GETS = "gets a runtime"
LOSES = "loses its runtime"
SWITCHES = "switches runtime"
CELLS = "cells change"


@dataclass(frozen=True)
class RowChange:
    """Rows of one model that change alike, in one or more namespaces."""

    model: ObjectKey
    namespaces: tuple[str, ...]
    change: str
    old_selected: ObjectKey | None
    new_selected: ObjectKey | None
    reasons: tuple[str, ...]
    row: RowDiff
    model_id: int | None = None
    cells: tuple[tuple[str, int], ...] = ()
    """(runtime name, runtime id) of each changed cell whose runtime is in the cluster."""
    everywhere: bool = False
    """A cluster-scoped model that changes alike in cluster scope and every namespace compared."""

    @property
    def first_namespace(self) -> str:
        return self.namespaces[0]

    @property
    def summary(self) -> str:
        """The change in words, naming only what changes: the pick when it changes, else the
        cells (the pick it keeps is not a change)."""
        if self.change == GETS:
            return f"gets a runtime: OME would pick {_name(self.new_selected)}"
        if self.change == LOSES:
            return f"loses its runtime {_name(self.old_selected)}"
        if self.change == SWITCHES:
            return f"switches runtime from {_name(self.old_selected)} to {_name(self.new_selected)}"
        cells = "; ".join(reason for reason in self.reasons if not reason.startswith("OME's pick"))
        return f"keeps {_name(self.old_selected)}; {cells}" if cells else f"keeps {_name(self.old_selected)}"

    def to_dict(self) -> dict[str, object]:
        return {
            "model": key_dict(self.model),
            "namespaces": list(self.namespaces),
            "change": self.change,
            "old_selected": key_dict(self.old_selected),
            "new_selected": key_dict(self.new_selected),
            "reasons": list(self.reasons),
        }


def _name(key: ObjectKey | None) -> str:
    return "none" if key is None else key[2]


def change_of(row: RowDiff) -> str:
    if row.old_selected is None and row.new_selected is not None:
        return GETS
    if row.old_selected is not None and row.new_selected is None:
        return LOSES
    return SWITCHES if row.pick_changed else CELLS


def reasons_of(row: RowDiff) -> tuple[str, ...]:
    """Why the row changes, in words: each runtime that starts or stops matching, a score that
    moves, and the pick that follows."""
    found = [f"{key[2]} starts matching" for key in row.gained]
    found += [f"{key[2]} stops matching" for key in row.lost]
    for cell in row.cells:
        moved = cell.old_status == cell.new_status and cell.old_score != cell.new_score
        if moved:
            found.append(f"{cell.runtime[2]} scores {cell.new_score} instead of {cell.old_score}")
        elif cell.runtime not in row.gained and cell.runtime not in row.lost:
            found.append(f"{cell.runtime[2]}: {cell.old_status or 'no cell'} → {cell.new_status or 'no cell'}")
    if row.pick_changed:
        found.append(f"OME's pick: {_name(row.old_selected)} → {_name(row.new_selected)}")
    return tuple(found)


def _stored_id(ids: Mapping[ObjectKey, int], key: ObjectKey) -> int | None:
    found = ids.get(key)
    return found if found is not None and found > 0 else None


def grouped_changes(result: WhatIfResult, ids: Mapping[ObjectKey, int]) -> list[RowChange]:
    """The changed rows grouped by model and by what changes (the pick before and after, and
    the reasons), in the result's order; each group lists its namespaces. `ids`: the
    cluster's resource ids, to link to the model and its cells (new objects have none)."""
    groups: dict[tuple[object, ...], list[RowDiff]] = {}
    for row in result.rows:
        groups.setdefault((row.model, *_change_key(row)), []).append(row)
    everywhere = _everywhere(result)
    return [
        RowChange(
            model=rows[0].model,
            namespaces=tuple(row.namespace for row in rows),
            change=change_of(rows[0]),
            old_selected=rows[0].old_selected,
            new_selected=rows[0].new_selected,
            reasons=key[3],  # type: ignore[arg-type]
            row=rows[0],
            model_id=_stored_id(ids, rows[0].model),
            cells=tuple(
                (cell.runtime[2], found)
                for cell in rows[0].cells
                if (found := _stored_id(ids, cell.runtime)) is not None
            ),
            everywhere=rows[0].model in everywhere,
        )
        for key, rows in groups.items()
    ]


def _change_key(row: RowDiff) -> tuple[object, ...]:
    """What rows of one model that change alike share: the pick before and after, and the reasons."""
    return (row.old_selected, row.new_selected, reasons_of(row))


def _everywhere(result: WhatIfResult) -> set[ObjectKey]:
    """The cluster-scoped models whose rows change alike in every namespace compared (the rule
    of `matching.fold_everywhere`); none when the result does not say what was compared."""
    if not result.compared:
        return set()
    folded = fold_everywhere(
        result.rows,
        model=lambda row: row.model,
        same=_change_key,
        namespace=lambda row: row.namespace,
        compared=lambda model: result.compared[model],
    )
    return {row.model for row, once in folded if once}
