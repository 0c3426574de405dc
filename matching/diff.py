"""`diff(base, head)`: what changes in OME's decisions between two sets of objects (two manifest
trees, or a cluster's inventory and the same with manifests applied).

Rows are the matrix's: a model in each namespace it is selected for (`Objects.namespaces_for`,
both views' namespaces). Only rows the changed objects can touch are compared: a changed model's
own, and those of the models one entry of a changed runtime (before or after) could match.
Every InferenceService is evaluated in both views, as the dashboard does. Each finding carries
the place (file, document, line) of the object that caused it, where the objects came from files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Set
from dataclasses import dataclass, replace

from . import reasons
from .candidates import CandidateIndex
from .diff_results import (
    BASE_SIDE,
    HEAD_SIDE,
    INVALID_OUTCOME,
    NO_RUNTIME_OUTCOME,
    SELECTED_OUTCOME,
    UNUSABLE_STATUSES,
    Diff,
    DiffCell,
    DiffIsvc,
    DiffRow,
    Place,
    key_label,
)
from .everywhere import fold_everywhere
from .isvc import BLOCKED, SILENT, WAITING, IsvcOutcome, evaluate_isvc, invalid_isvc
from .select import model_error
from .tree import Objects
from .types import RUNTIME_KINDS, ObjectKey

Cell = tuple[str, int | None]
"""A cell's status and score (None unless OME can auto-select the runtime)."""


@dataclass(frozen=True)
class _Row:
    """One row of one view; `outcome` None where the model is absent."""

    outcome: str | None
    pick: ObjectKey | None = None
    score: int | None = None
    cells: dict[ObjectKey, Cell] | None = None
    manual: dict[ObjectKey, str] | None = None
    invalid: str | None = None


def _row(view: Objects, model_key: ObjectKey, namespace: str) -> _Row:
    if model_key in view.invalid:
        return _Row(INVALID_OUTCOME, invalid=view.invalid[model_key])
    model = view.models.get(model_key)
    if model is None:
        return _Row(None)
    error = model_error(model)
    if error is not None:
        return _Row(INVALID_OUTCOME, invalid=error)
    selection = view.grid.select(model_key, namespace)
    cells: dict[ObjectKey, Cell] = dict.fromkeys(selection.manual_keys, ("manual-only", None))
    for rank, match in enumerate(selection.compatible):
        cells[match.key] = ("selected" if rank == 0 else "compatible", match.score)
    if not selection.compatible:
        return _Row(NO_RUNTIME_OUTCOME, cells=cells, manual=selection.manual_keys)
    best = selection.compatible[0]
    return _Row(SELECTED_OUTCOME, best.key, best.score, cells, selection.manual_keys)


def _cell(view: Objects, row: _Row, runtime_key: ObjectKey, namespace: str) -> tuple[str | None, int | None]:
    if row.cells is None:
        return (None, None)
    if runtime_key in row.cells:
        return row.cells[runtime_key]
    runtime = view.runtimes.get(runtime_key)
    if runtime is None or (not runtime.is_cluster and runtime.namespace != namespace):
        return (None, None)
    return ("disabled" if runtime.is_disabled else "excluded", None)


def _status_reason(view: Objects, row: _Row, model_key: ObjectKey, runtime_key: ObjectKey, status: str | None) -> str:
    """Why the cell has `status` in `view` (for statuses that are not a match)."""
    runtime = view.runtimes.get(runtime_key)
    if status == "manual-only" and row.manual is not None:
        return row.manual[runtime_key]
    if runtime is None:
        return "the runtime is removed"
    if row.outcome == INVALID_OUTCOME:
        return row.invalid or ""
    if row.outcome is None:
        return "the model is removed"
    if status == "disabled":
        return reasons.runtime_disabled(runtime.name, is_cluster=runtime.is_cluster)
    if status == "excluded":
        return view.grid.reason(model_key, runtime_key) or ""
    return f"out of scope in namespace {runtime.namespace or '-'}"


def _reportable(old: str | None, new: str | None) -> bool:
    """A cell appearing or vanishing while unusable (a runtime added that excludes the model)
    is not a change worth showing."""
    if old == new:
        return False
    return not ((old is None or new is None) and {old, new} - {None} <= UNUSABLE_STATUSES)


def _cell_changes(
    base: Objects, head: Objects, rows: tuple[_Row, _Row], model_key: ObjectKey, namespace: str, changed: set[ObjectKey]
) -> list[DiffCell]:
    before, after = rows
    found = []
    for runtime_key in sorted(set(before.cells or {}) | set(after.cells or {}) | changed):
        old_status, old_score = _cell(base, before, runtime_key, namespace)
        new_status, new_score = _cell(head, after, runtime_key, namespace)
        if not _reportable(old_status, new_status) and (old_status != new_status or old_score == new_score):
            continue
        if new_status in ("selected", "compatible"):
            reason = (
                None
                if old_status in (None, "selected", "compatible")
                else (f"was {old_status}: {_status_reason(base, before, model_key, runtime_key, old_status)}")
            )
        else:
            reason = _status_reason(head, after, model_key, runtime_key, new_status)
        found.append(DiffCell(runtime_key, old_status, new_status, old_score, new_score, reason))
    return found


def _pick_reason(rows: tuple[_Row, _Row], cells: list[DiffCell]) -> str | None:
    before, after = rows
    if before.pick is None or before.pick == after.pick:
        return None
    old_pick = next((cell for cell in cells if cell.runtime == before.pick), None)
    if old_pick is not None and old_pick.new_status not in ("selected", "compatible"):
        return f"{key_label(before.pick)} is now {old_pick.new_status or 'gone'}: {old_pick.reason}"
    if after.pick is not None:
        return f"{key_label(after.pick)} (score {after.score}) now ranks above {key_label(before.pick)}"
    return None


def _row_error(view: Objects, row: _Row, model_key: ObjectKey, namespace: str) -> str | None:
    if row.outcome == INVALID_OUTCOME:
        return row.invalid
    if row.outcome == NO_RUNTIME_OUTCOME:
        return view.grid.select(model_key, namespace).error
    return None


def _row_change(
    base: Objects, head: Objects, model_key: ObjectKey, namespace: str, changed: set[ObjectKey]
) -> DiffRow | None:
    rows = (_row(base, model_key, namespace), _row(head, model_key, namespace))
    before, after = rows
    scoped = {key for key in changed if key[0] == "ClusterServingRuntime" or key[1] == namespace}
    cells = _cell_changes(base, head, rows, model_key, namespace, scoped)
    same = (before.outcome, before.pick, before.score) == (after.outcome, after.pick, after.score)
    if same and not cells:
        return None
    outcome_changed = before.outcome != after.outcome
    return DiffRow(
        model=model_key,
        namespace=namespace,
        old_outcome=before.outcome,
        new_outcome=after.outcome,
        old_pick=before.pick,
        new_pick=after.pick,
        old_score=before.score,
        new_score=after.score,
        cells=tuple(cells),
        reason=_pick_reason(rows, cells),
        error=_row_error(head, after, model_key, namespace) if outcome_changed else None,
    )


def changed_objects(base: Objects, head: Objects) -> list[tuple[ObjectKey, str]]:
    """(key, added | changed | removed) for every object that differs, by key."""
    keys = set(base.models) | set(base.runtimes) | set(base.isvcs) | set(base.invalid)
    keys |= set(head.models) | set(head.runtimes) | set(head.isvcs) | set(head.invalid)
    found = []
    for key in sorted(keys):
        old = base.value(key) or base.invalid.get(key)
        new = head.value(key) or head.invalid.get(key)
        if old is None:
            found.append((key, "added"))
        elif new is None:
            found.append((key, "removed"))
        elif old != new or (key in base.pinned) != (key in head.pinned):
            found.append((key, "changed"))
    return found


def _affected_models(base: Objects, head: Objects, changed: Iterable[ObjectKey]) -> list[ObjectKey]:
    found: set[ObjectKey] = set()
    runtimes = []
    for key in changed:
        if key[0] in RUNTIME_KINDS:
            runtimes += [view.runtimes[key] for view in (base, head) if key in view.runtimes]
        elif key in base.model_keys or key in head.model_keys:
            found.add(key)
    for view in (base, head):
        index = CandidateIndex(view.models)
        for runtime in runtimes:
            found.update(index.candidates(runtime))
    return sorted(found)


def _rows(base: Objects, head: Objects, changed: list[ObjectKey]) -> tuple[list[DiffRow], int]:
    runtimes = {key for key in changed if key[0] in RUNTIME_KINDS}
    rows, compared = [], 0
    for model_key in _affected_models(base, head, changed):
        namespaces = set()
        for view in (base, head):
            if model_key in view.model_keys:
                namespaces.update(view.namespaces_for(model_key))
        for namespace in sorted(namespaces):
            compared += 1
            change = _row_change(base, head, model_key, namespace, runtimes)
            if change is not None:
                rows.append(change)
    return rows, compared


def _folded(rows: list[DiffRow]) -> list[DiffRow]:
    """A cluster-scoped model's rows that change alike (outcomes, picks, scores, cells) in
    cluster scope and every namespace, once (`matching.fold_everywhere`). OME's error is the
    cluster scope's: each namespace's error also lists the namespace's own runtimes, unchanged."""

    def change(row: DiffRow) -> DiffRow:
        return replace(row, namespace="", error=None)

    counts = Counter(row.model for row in rows)
    folded = fold_everywhere(rows, model=lambda row: row.model, same=change)
    return [replace(row, everywhere=True, stands_for=counts[row.model]) if once else row for row, once in folded]


def _outcome(view: Objects, key: ObjectKey) -> IsvcOutcome | None:
    if key in view.invalid:
        return invalid_isvc(view.invalid[key])
    isvc = view.isvcs.get(key)
    if isvc is None:
        return None
    return evaluate_isvc(view.grid, isvc, view.invalid, pinned=key in view.pinned)


def _isvc_change(key: ObjectKey, old: IsvcOutcome | None, new: IsvcOutcome | None) -> DiffIsvc | None:
    def decision(outcome: IsvcOutcome | None) -> tuple[object, ...] | None:
        return None if outcome is None else (outcome.verdict, outcome.model, outcome.runtime)

    if decision(old) == decision(new):
        return None
    reason: str | None
    if new is None:
        reason = "the InferenceService is removed"
    elif new.verdict in (BLOCKED, WAITING, SILENT):
        reason = new.error
    elif old is not None and old.runtime != new.runtime:
        reason = f"runtime {key_label(old.runtime)} -> {key_label(new.runtime)}" + (
            f" (score {new.score})" if new.score is not None else ""
        )
    else:
        reason = "; ".join(new.notes) or None
    return DiffIsvc(
        isvc=key,
        old_verdict=None if old is None else old.verdict,
        new_verdict=None if new is None else new.verdict,
        old_model=None if old is None else old.model,
        new_model=None if new is None else new.model,
        old_runtime=None if old is None else old.runtime,
        new_runtime=None if new is None else new.runtime,
        reason=reason,
        fix=None if new is None else new.fix,
    )


def _isvcs(base: Objects, head: Objects) -> tuple[list[DiffIsvc], int]:
    keys = sorted(base.isvc_keys | head.isvc_keys)
    changes = [_isvc_change(key, _outcome(base, key), _outcome(head, key)) for key in keys]
    return [change for change in changes if change is not None], len(keys)


def _place(base: Objects, head: Objects, key: ObjectKey) -> Place | None:
    if key in head.origins:
        return Place(key, HEAD_SIDE, head.origins[key])
    if key in base.origins:
        return Place(key, BASE_SIDE, base.origins[key])
    return None


def _cause(row: DiffRow, changed: Set[ObjectKey]) -> ObjectKey:
    """The object a row's change comes from: the model when it changed, else the first changed
    runtime among the old pick, the new pick and the row's cells."""
    for key in (row.model, row.old_pick, row.new_pick, *(cell.runtime for cell in row.cells)):
        if key is not None and key in changed:
            return key
    return row.model


def _located(base: Objects, head: Objects, rows: list[DiffRow], changed: Set[ObjectKey]) -> list[DiffRow]:
    return [
        replace(
            row,
            at=_place(base, head, _cause(row, changed)),
            cells=tuple(replace(cell, at=_place(base, head, cell.runtime)) for cell in row.cells),
        )
        for row in rows
    ]


def diff(base: Objects, head: Objects) -> Diff:
    """What OME would decide differently in `head` than in `base` (see the module docstring).
    Both sides must be judged by the same OME profile (ValueError otherwise): a change of
    profile is what `matching.behaviour_diff` answers."""
    if base.behaviour != head.behaviour:
        raise ValueError(f"diff: BASE is judged by OME {base.behaviour.name}, HEAD by OME {head.behaviour.name}")
    objects = changed_objects(base, head)
    changed = {key for key, _action in objects}
    rows, rows_compared = _rows(base, head, sorted(changed))
    isvcs, isvcs_compared = _isvcs(base, head)
    return Diff(
        objects=tuple(objects),
        rows=tuple(_located(base, head, _folded(rows), changed)),
        isvcs=tuple(replace(isvc, at=_place(base, head, isvc.isvc)) for isvc in isvcs),
        rows_compared=rows_compared,
        isvcs_compared=isvcs_compared,
        behaviour=head.behaviour.name,
    )
