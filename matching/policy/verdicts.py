"""OME's verdicts over a set of objects, as policies read them: each matrix row's outcome, pick
and ranking, and each InferenceService's decision; and a `Baseline` of picks and decisions
that later verdicts are compared with."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from ..ignored import Ignored, ome_ignores
from ..isvc import IsvcOutcome, evaluate_isvc, invalid_isvc
from ..results import Match, Selection
from ..select import model_error
from ..tree import Objects
from ..types import ObjectKey

RowKey = tuple[ObjectKey, str]
"""(model key, namespace): a matrix row; namespace "" is a ClusterBaseModel's cluster scope."""
Decision = tuple[str, ObjectKey | None, ObjectKey | None]
"""An InferenceService's (verdict, model, runtime)."""


@dataclass(frozen=True)
class Row:
    """A matrix row's verdict. OME's error text (for no runtime) is composed only when asked
    for: composing it lists every excluded runtime's reason, most of a row's cost."""

    model: ObjectKey
    namespace: str
    ranked: tuple[Match, ...] = ()
    invalid: str | None = None
    selection: Selection | None = field(default=None, compare=False, repr=False)

    @property
    def error(self) -> str | None:
        """OME's error when it picks nothing (no runtime, or an invalid model)."""
        if self.invalid is not None:
            return self.invalid
        return None if self.ranked or self.selection is None else self.selection.error

    @property
    def pick(self) -> ObjectKey | None:
        return self.ranked[0].key if self.ranked else None

    @property
    def score(self) -> int | None:
        return self.ranked[0].score if self.ranked else None


@dataclass(frozen=True)
class Baseline:
    """The picks and decisions verdicts are compared with (pickUnchanged, decisionUnchanged)."""

    picks: Mapping[RowKey, ObjectKey | None] = field(default_factory=dict)
    decisions: Mapping[ObjectKey, Decision] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, for a dashboard to store; `baseline_from_dict` reads it back."""
        return {
            "picks": [[list(model), namespace, list(pick) if pick else None] for (model, namespace), pick in self.picks.items()],
            "decisions": [[list(key), verdict, _list(model), _list(runtime)] for key, (verdict, model, runtime) in self.decisions.items()],
        }  # fmt: skip


def _list(key: ObjectKey | None) -> list[str] | None:
    return None if key is None else list(key)


def _key(raw: object) -> ObjectKey | None:
    if not isinstance(raw, list) or len(raw) != 3:
        return None
    return (str(raw[0]), str(raw[1]), str(raw[2]))


def baseline_from_dict(raw: Mapping[str, object]) -> Baseline:
    """The inverse of `Baseline.to_dict`; entries of another shape are dropped."""
    picks: dict[RowKey, ObjectKey | None] = {}
    for item in raw.get("picks") or ():  # type: ignore[attr-defined]
        model = _key(item[0])
        if model is not None:
            picks[(model, str(item[1]))] = _key(item[2])
    decisions: dict[ObjectKey, Decision] = {}
    for item in raw.get("decisions") or ():  # type: ignore[attr-defined]
        key = _key(item[0])
        if key is not None:
            decisions[key] = (str(item[1]), _key(item[2]), _key(item[3]))
    return Baseline(picks, decisions)


class Verdicts:
    """The verdicts of `objects`, computed once each, when first asked for."""

    def __init__(self, objects: Objects) -> None:
        self.objects = objects

    @cached_property
    def rows(self) -> dict[RowKey, Row]:
        return {
            (key, ns): self._row(key, ns) for key in sorted(self.objects.model_keys) for ns in self._namespaces(key)
        }

    def _namespaces(self, key: ObjectKey) -> list[str]:
        return self.objects.namespaces_for(key) if key in self.objects.models else [key[1]]

    def _row(self, key: ObjectKey, namespace: str) -> Row:
        if key in self.objects.invalid:
            return Row(key, namespace, invalid=self.objects.invalid[key])
        error = model_error(self.objects.models[key])
        if error is not None:
            return Row(key, namespace, invalid=error)
        selection = self.objects.grid.select(key, namespace)
        return Row(key, namespace, tuple(selection.compatible), selection=selection)

    @cached_property
    def isvcs(self) -> dict[ObjectKey, IsvcOutcome]:
        view = self.objects
        found = {key: invalid_isvc(error) for key, error in view.invalid.items() if key[0] == "InferenceService"}
        for key, isvc in sorted(view.isvcs.items()):
            found[key] = evaluate_isvc(view.grid, isvc, view.invalid, pinned=key in view.pinned)
        return found

    @cached_property
    def ignored(self) -> dict[ObjectKey, Ignored]:
        """The services OME silently ignores (`matching.ome_ignores`), with why."""
        view = self.objects
        found = {}
        for key, outcome in self.isvcs.items():
            ignored = ome_ignores(outcome, view.isvcs.get(key), view.grid, view.invalid)
            if ignored is not None:
                found[key] = ignored
        return found

    def baseline(self) -> Baseline:
        return Baseline(
            picks={key: row.pick for key, row in self.rows.items()},
            decisions={key: (o.verdict, o.model, o.runtime) for key, o in self.isvcs.items()},
        )
