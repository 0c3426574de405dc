"""What a what-if returns: the objects it changes and the matrix rows and cells that would change."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.web import namespace_token
from matching import ObjectKey, key_dict

MAX_ERROR_TEXTS = 50
"""OME's error texts are given for the first rows whose outcome changes only: each lists every
runtime in scope with its reason, which is costly on large clusters."""


@dataclass(frozen=True)
class ObjectChange:
    """One object the what-if changes: `added`, `changed`, `unchanged` or `removed`."""

    key: ObjectKey
    action: str

    def to_dict(self) -> dict[str, object]:
        return {**(key_dict(self.key) or {}), "action": self.action}


@dataclass(frozen=True)
class CellDiff:
    """One runtime's cell in one (model, namespace) row, before and after. A status is None
    where the cell does not exist (the model or runtime is absent, or out of scope); a score
    and rank only for runtimes OME can auto-select (rank 0 is OME's pick)."""

    runtime: ObjectKey
    old_status: str | None
    new_status: str | None
    old_score: int | None = None
    new_score: int | None = None
    old_rank: int | None = None
    new_rank: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "runtime": key_dict(self.runtime),
            "old_status": self.old_status,
            "new_status": self.new_status,
            "old_score": self.old_score,
            "new_score": self.new_score,
            "old_rank": self.old_rank,
            "new_rank": self.new_rank,
        }


@dataclass(frozen=True)
class RowDiff:
    """One (model, namespace) row whose pick, outcome or cells would change.

    Outcomes are MatrixRow's (`selected`, `no-runtime`, `invalid`), or None where the model
    does not exist. `gained`/`lost`: runtimes that would start/stop matching the model
    (selected, compatible or manual-only). `old_error`/`new_error`: OME's error when no runtime
    is selected (NoRuntimeFoundError or the model validation error), given where the outcome
    changes, for the first MAX_ERROR_TEXTS such rows.
    """

    model: ObjectKey
    namespace: str
    old_outcome: str | None
    new_outcome: str | None
    old_selected: ObjectKey | None
    new_selected: ObjectKey | None
    old_score: int | None
    new_score: int | None
    cells: list[CellDiff] = field(default_factory=list)
    gained: list[ObjectKey] = field(default_factory=list)
    lost: list[ObjectKey] = field(default_factory=list)
    old_error: str | None = None
    new_error: str | None = None
    old_row: bool = True
    new_row: bool = True

    @property
    def pick_changed(self) -> bool:
        return self.old_selected != self.new_selected

    def to_dict(self) -> dict[str, object]:
        return {
            "model": key_dict(self.model),
            "namespace": self.namespace,
            "old_outcome": self.old_outcome,
            "new_outcome": self.new_outcome,
            "old_selected": key_dict(self.old_selected),
            "new_selected": key_dict(self.new_selected),
            "old_score": self.old_score,
            "new_score": self.new_score,
            "pick_changed": self.pick_changed,
            "gained": [key_dict(key) for key in self.gained],
            "lost": [key_dict(key) for key in self.lost],
            "old_error": self.old_error,
            "new_error": self.new_error,
            "old_row": self.old_row,
            "new_row": self.new_row,
            "cells": [cell.to_dict() for cell in self.cells],
        }


@dataclass(frozen=True)
class ValueWarning:
    """A value OME accepts but cannot match, in one of the what-if's objects: evaluated anyway."""

    obj: ObjectKey
    path: str
    problem: str
    line: int | None = None
    hint: str | None = None

    def to_dict(self) -> dict[str, object]:
        # "object" is a Kubernetes field for namespace_tokens, so its cluster scope is set here.
        return {
            "object": {**(key_dict(self.obj) or {}), "namespace": namespace_token(self.obj[1])},
            "path": self.path,
            "problem": self.problem,
            "line": self.line,
            "hint": self.hint,
        }


@dataclass(frozen=True)
class WhatIfResult:
    """What the changes would do to the matrix; `rows` holds only rows that change."""

    cluster: str
    objects: list[ObjectChange]
    rows: list[RowDiff]
    models_evaluated: int
    rows_evaluated: int
    warnings: list[ValueWarning] = field(default_factory=list)
    compared: dict[ObjectKey, tuple[str, ...]] = field(default_factory=dict)
    """The namespaces each evaluated model's rows were compared in ("" for cluster scope); empty
    for a reader of part of the cluster, so that no row claims to be the same in every namespace."""

    @property
    def cells(self) -> list[tuple[ObjectKey, str, CellDiff]]:
        return [(row.model, row.namespace, cell) for row in self.rows for cell in row.cells]

    def row(self, model: ObjectKey, namespace: str) -> RowDiff | None:
        return next((r for r in self.rows if r.model == model and r.namespace == namespace), None)

    def to_dict(self) -> dict[str, object]:
        return {
            "cluster": self.cluster,
            "objects": [change.to_dict() for change in self.objects],
            "rows": [row.to_dict() for row in self.rows],
            "warnings": [warning.to_dict() for warning in self.warnings],
            "summary": {
                "rows_changed": len(self.rows),
                "cells_changed": sum(len(row.cells) for row in self.rows),
                "picks_changed": sum(1 for row in self.rows if row.pick_changed),
                "models_evaluated": self.models_evaluated,
                "rows_evaluated": self.rows_evaluated,
            },
        }
