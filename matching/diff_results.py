"""What `diff` returns: the cells, rows and InferenceServices that change between two sets of
objects, and the conditions a check can fail on. Each has `.to_dict()` (camelCase keys) and
`at`: the place of the manifest object that caused it, where the objects came from files."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from urllib.parse import quote

from .everywhere import EVERYWHERE
from .keys import key_dict, key_text
from .positions import Origin
from .types import ObjectKey

SELECTED_OUTCOME = "selected"
NO_RUNTIME_OUTCOME = "no-runtime"
INVALID_OUTCOME = "invalid"

MATCHING_STATUSES = frozenset({"selected", "compatible", "manual-only"})
"""Cell statuses where OME can use the runtime for the model: ranked, or valid when named."""
UNUSABLE_STATUSES = frozenset({"excluded", "disabled"})

CONDITIONS: dict[str, str] = {
    "lost-runtime": "a model that OME gave a runtime in a namespace gets none",
    "gained-runtime": "a model that had no runtime in a namespace gets one",
    "pick-changed": "OME would pick another runtime for a model in a namespace",
    "score-changed": "OME keeps its pick for a model but the pick's score changes",
    "new-exclusion": "a runtime that matched a model (selected, compatible or manual-only) excludes it or is disabled",
    "cell-changed": "any cell changes status or score",
    "isvc-rejected": "an InferenceService that OME would deploy is now blocked (or a new one is blocked)",
    "isvc-changed": "OME would decide an InferenceService differently (verdict, model or runtime)",
    "any-change": "anything above",
}
"""The conditions `--fail-on` takes, with what each means."""


def key_label(key: ObjectKey | None) -> str:
    return "-" if key is None else key_text(key)


HEAD_SIDE = "head"
BASE_SIDE = "base"


@dataclass(frozen=True)
class Place:
    """Where the object that caused a finding is written: `origin` in the HEAD tree, or in the
    BASE tree (`side` "base") when HEAD no longer holds the object."""

    key: ObjectKey
    side: str
    origin: Origin

    @property
    def line(self) -> int | None:
        return self.origin.line

    @property
    def uri(self) -> str:
        """The file as a relative URI reference (percent-encoded, no leading `./`), for links
        and SARIF."""
        return quote(self.origin.file.removeprefix("./"))

    @property
    def text(self) -> str:
        """`file:line` (or the file alone when the line is unknown, as in JSON files)."""
        return self.origin.file if self.line is None else f"{self.origin.file}:{self.line}"

    def to_dict(self) -> dict[str, object]:
        return {
            "object": key_dict(self.key),
            "side": self.side,
            "file": self.origin.file,
            "line": self.line,
            "document": self.origin.document,
            "item": self.origin.item,
        }


def place_dict(place: Place | None) -> dict[str, object] | None:
    return None if place is None else place.to_dict()


@dataclass(frozen=True)
class DiffCell:
    """One runtime's cell of one row, before and after. A status is None where the cell does
    not exist (runtime or model absent, or out of scope); a score only for runtimes OME can
    auto-select. `reason`: OME's reason for the new status (excluded, disabled, manual-only,
    gone), or, for a cell that now matches, the reason it did not before."""

    runtime: ObjectKey
    old_status: str | None
    new_status: str | None
    old_score: int | None = None
    new_score: int | None = None
    reason: str | None = None
    at: Place | None = None

    @property
    def new_exclusion(self) -> bool:
        return self.old_status in MATCHING_STATUSES and self.new_status in UNUSABLE_STATUSES

    def to_dict(self) -> dict[str, object]:
        return {
            "runtime": key_dict(self.runtime),
            "oldStatus": self.old_status,
            "newStatus": self.new_status,
            "oldScore": self.old_score,
            "newScore": self.new_score,
            "reason": self.reason,
            "at": place_dict(self.at),
        }


@dataclass(frozen=True)
class DiffRow:
    """One (model, namespace) row whose outcome, pick, score or cells change. Outcomes:
    selected | no-runtime | invalid, None where the model is absent. `reason`: why the pick or
    outcome changes; `error`: OME's error for the new row when it selects nothing.
    `everywhere`: a cluster-scoped model that changes alike in every namespace, shown once
    (`namespace` is then ""; `matching.fold_everywhere`); `stands_for`: how many rows (cluster
    scope and each namespace) it is."""

    model: ObjectKey
    namespace: str
    old_outcome: str | None
    new_outcome: str | None
    old_pick: ObjectKey | None
    new_pick: ObjectKey | None
    old_score: int | None
    new_score: int | None
    cells: tuple[DiffCell, ...] = ()
    reason: str | None = None
    error: str | None = None
    at: Place | None = None
    everywhere: bool = False
    stands_for: int = 1

    @property
    def conditions(self) -> set[str]:
        found = set()
        had, has = self.old_outcome == SELECTED_OUTCOME, self.new_outcome == SELECTED_OUTCOME
        if had and not has and self.new_outcome is not None:
            found.add("lost-runtime")
        if has and not had and self.old_outcome is not None:
            found.add("gained-runtime")
        if had and has and self.old_pick != self.new_pick:
            found.add("pick-changed")
        if had and has and self.old_pick == self.new_pick and self.old_score != self.new_score:
            found.add("score-changed")
        if any(cell.new_exclusion for cell in self.cells):
            found.add("new-exclusion")
        if self.cells:
            found.add("cell-changed")
        return found | {"any-change"}

    @property
    def scope(self) -> str:
        return EVERYWHERE if self.everywhere else self.namespace or "cluster scope"

    @property
    def title(self) -> str:
        return (
            f"{key_text(self.model)} ({EVERYWHERE})" if self.everywhere else f"{key_text(self.model)} in {self.scope}"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "model": key_dict(self.model),
            "namespace": self.namespace,
            "everywhere": self.everywhere,
            "standsFor": self.stands_for,
            "oldOutcome": self.old_outcome,
            "newOutcome": self.new_outcome,
            "oldPick": key_dict(self.old_pick),
            "newPick": key_dict(self.new_pick),
            "oldScore": self.old_score,
            "newScore": self.new_score,
            "reason": self.reason,
            "error": self.error,
            "at": place_dict(self.at),
            "conditions": sorted(self.conditions),
            "cells": [cell.to_dict() for cell in self.cells],
        }


@dataclass(frozen=True)
class DiffIsvc:
    """One InferenceService OME would decide differently. Verdicts are `matching.isvc`'s
    (selected | named | advisory | blocked | waiting | silent), None where the service is
    absent. `reason`: OME's error (or, for silent, its log line) for a service it does not
    deploy, else a note on what changed."""

    isvc: ObjectKey
    old_verdict: str | None
    new_verdict: str | None
    old_model: ObjectKey | None
    new_model: ObjectKey | None
    old_runtime: ObjectKey | None
    new_runtime: ObjectKey | None
    reason: str | None = None
    fix: str | None = None
    at: Place | None = None

    @property
    def rejected(self) -> bool:
        return self.new_verdict == "blocked" and self.old_verdict != "blocked"

    @property
    def conditions(self) -> set[str]:
        if self.new_verdict is None:  # removed: OME decides nothing about it any more
            return {"any-change"}
        return {"isvc-rejected", "isvc-changed", "any-change"} if self.rejected else {"isvc-changed", "any-change"}

    def to_dict(self) -> dict[str, object]:
        return {
            "isvc": key_dict(self.isvc),
            "oldVerdict": self.old_verdict,
            "newVerdict": self.new_verdict,
            "oldModel": key_dict(self.old_model),
            "newModel": key_dict(self.new_model),
            "oldRuntime": key_dict(self.old_runtime),
            "newRuntime": key_dict(self.new_runtime),
            "reason": self.reason,
            "fix": self.fix,
            "at": place_dict(self.at),
            "conditions": sorted(self.conditions),
        }


@dataclass(frozen=True)
class Diff:
    """Everything that changes from BASE to HEAD; `objects` lists the objects that differ
    (added, changed, removed), `compared` how many rows and services were evaluated,
    `behaviour` the name of the OME profile that judged both sides."""

    objects: tuple[tuple[ObjectKey, str], ...]
    rows: tuple[DiffRow, ...]
    isvcs: tuple[DiffIsvc, ...]
    rows_compared: int
    isvcs_compared: int
    behaviour: str

    @property
    def rows_changed(self) -> int:
        """How many rows change: a folded row ("same in every namespace") counts each row it
        stands for, as `rows_compared` counted them."""
        return sum(row.stands_for for row in self.rows)

    @property
    def cells_changed(self) -> int:
        """How many cells change, a folded row's cells once in each row it stands for."""
        return sum(len(row.cells) * row.stands_for for row in self.rows)

    def counts(self) -> Counter[str]:
        """How often each condition occurs (in how many rows and services)."""
        found: Counter[str] = Counter()
        for row in self.rows:
            found.update(row.conditions)
        for isvc in self.isvcs:
            found.update(isvc.conditions)
        return found

    @property
    def lost(self) -> list[DiffRow]:
        return [row for row in self.rows if "lost-runtime" in row.conditions]

    @property
    def gained(self) -> list[DiffRow]:
        return [row for row in self.rows if "gained-runtime" in row.conditions]

    def to_dict(self) -> dict[str, object]:
        return {
            "behaviour": self.behaviour,
            "objects": [{**(key_dict(key) or {}), "action": action} for key, action in self.objects],
            "rows": [row.to_dict() for row in self.rows],
            "isvcs": [isvc.to_dict() for isvc in self.isvcs],
            "summary": {
                "rowsCompared": self.rows_compared,
                "isvcsCompared": self.isvcs_compared,
                "rowsChanged": self.rows_changed,
                "cellsChanged": self.cells_changed,
                "isvcsChanged": len(self.isvcs),
                "conditions": dict(sorted(self.counts().items())),
            },
        }
