"""What changes when a cluster moves from one OME to another: every cell, selection and
InferenceService whose verdict, pick, score or error differs between two behaviour profiles,
each explained by the behaviour (spec section 10's U-number) that causes it.

A difference is attributed by evaluating it once more under the first profile with one
behaviour switched to the second's: the behaviours that alone produce the second profile's
value are its causes. When no single one does, the behaviours that change it at all are
named (or, failing that, all that differ), marked as acting together.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from .behaviour import CHANGES, Behaviour, BehaviourInput, as_behaviour, changes_between
from .candidates import in_scope
from .grid import Grid
from .isvc import evaluate_isvc
from .keys import key_dict
from .rules import reason_behaviours
from .types import BASE_MODEL, CLUSTER_SERVING_RUNTIME, ObjectKey

CELL = "cell"
SELECTION = "selection"
ISVC = "isvc"


@dataclass(frozen=True, kw_only=True)
class Difference:
    """One thing that one profile decides differently from another.

    `subject`: cell (a model against a runtime) | selection (a model in a namespace) | isvc.
    `field`: verdict | pick | score | error. `before` / `after`: the value under the first and
    the second profile. `causes`: the U-numbers responsible; `together`: True when no single
    behaviour explains it alone.
    """

    subject: str
    field: str
    before: object
    after: object
    causes: tuple[str, ...]
    together: bool = False
    model: ObjectKey | None = None
    runtime: ObjectKey | None = None
    namespace: str | None = None
    isvc: ObjectKey | None = None
    gained: tuple[str, ...] = ()

    @property
    def explanation(self) -> str:
        """The causes in words, each said as gained or lost by the move."""
        parts = [
            f"{code} ({'newer OME' if code in self.gained else 'older OME'}): {CHANGES[code]}" for code in self.causes
        ]
        text = "; ".join(parts)
        return f"together: {text}" if self.together else text

    def to_dict(self) -> dict[str, object]:
        def plain(value: object) -> object:
            if isinstance(value, tuple) and len(value) == 3 and all(isinstance(part, str) for part in value):
                return key_dict((str(value[0]), str(value[1]), str(value[2])))
            return value

        return {
            "subject": self.subject,
            "field": self.field,
            "model": key_dict(self.model),
            "runtime": key_dict(self.runtime),
            "namespace": self.namespace,
            "isvc": key_dict(self.isvc),
            "before": plain(self.before),
            "after": plain(self.after),
            "causes": list(self.causes),
            "together": self.together,
            "explanation": self.explanation,
        }


Probe = Callable[[Grid], object]
"""Reads one value (a verdict, a pick, ...) from a grid evaluated under some profile."""


def _cell_probes(model: ObjectKey, runtime: ObjectKey) -> dict[str, Probe]:
    return {
        "verdict": lambda g: g.verdict(model, runtime)[0],
        "score": lambda g: g.score(model, runtime) if g.verdict(model, runtime)[0] else None,
        "error": lambda g: g.panics(model).get(runtime),
    }


def _selection_probes(model: ObjectKey, namespace: str) -> dict[str, Probe]:
    def pick(g: Grid) -> object:
        found = g.select(model, namespace).compatible
        return found[0].key if found else None

    return {"pick": pick, "error": lambda g: g.select(model, namespace).error}


def _error_outline(grid: Grid, model: ObjectKey, namespace: str, codes: frozenset[str]) -> Probe | None:
    """What a selection's error is made of apart from reason texts: the compatible and the
    crashing runtimes in scope, and whether it fails at all. Where no reason text can depend
    on the changed behaviours (`reason_behaviours`), equal outlines mean equal errors, and
    the texts need not be built."""
    subject = grid.models[model]
    scope = [rt for rt in grid.runtimes.values() if rt.is_cluster or rt.namespace == namespace]
    if any(reason_behaviours(subject, runtime) & codes for runtime in scope):
        return None

    def outline(g: Grid) -> object:
        keys = {key for key in g.compatible_entries(model) if key[0] == CLUSTER_SERVING_RUNTIME or key[1] == namespace}
        crashes = {key for key in g.panics(model) if key[0] == CLUSTER_SERVING_RUNTIME or key[1] == namespace}
        return (frozenset(keys), frozenset(crashes), not g.select(model, namespace).compatible)

    return outline


def _isvc_probes(isvc: ObjectKey, invalid: Mapping[ObjectKey, str]) -> dict[str, Probe]:
    def outcome(g: Grid) -> tuple[object, ...]:
        found = evaluate_isvc(g, g.isvcs[isvc], invalid)
        return (found.verdict, found.runtime, found.score, found.error)

    def part(index: int) -> Probe:
        return lambda g: outcome(g)[index]

    return {name: part(index) for index, name in enumerate(("verdict", "pick", "score", "error"))}


class _Explainer:
    """The grids under the first profile with one behaviour switched, built when first needed."""

    def __init__(self, base: Grid, old: Behaviour, new: Behaviour) -> None:
        self.base, self.old, self.new = base, old, new
        self.codes = changes_between(old, new)
        self._grids: dict[str, Grid] = {}

    def _switched(self, code: str) -> Behaviour:
        changes = set(self.old.changes) ^ {code}
        modes = self.new.deployment_modes if code in ("U2", "modes") else self.old.deployment_modes
        return dataclasses.replace(
            self.old, name=f"{self.old.name}^{code}", changes=frozenset(changes), deployment_modes=modes
        )

    def grid(self, code: str) -> Grid:
        found = self._grids.get(code)
        if found is None:
            base = self.base
            found = self._grids[code] = Grid(
                base.models.values(), base.runtimes.values(), base.isvcs.values(), behaviour=self._switched(code)
            )
        return found

    def causes(self, probe: Probe, before: object, after: object) -> tuple[tuple[str, ...], bool]:
        values = {code: probe(self.grid(code)) for code in self.codes}
        alone = tuple(code for code in self.codes if values[code] == after)
        if alone:
            return alone, False
        moved = tuple(code for code in self.codes if values[code] != before)
        return (moved or tuple(self.codes)), True


Subject = tuple[str, dict[str, object], dict[str, Probe], dict[str, Probe]]
"""(subject, where, the probe of each field, a cheaper probe that must differ first, by field)."""


def _subjects(old: Grid, codes: frozenset[str]) -> Iterator[Subject]:
    runtimes = sorted(old.runtimes)
    for model in sorted(old.models):
        for runtime in runtimes:
            if in_scope(runtime, model):
                yield CELL, {"model": model, "runtime": runtime}, _cell_probes(model, runtime), {}
        namespaces = [model[1]] if model[0] == BASE_MODEL else ["", *old.namespaces]
        for namespace in namespaces:
            outline = _error_outline(old, model, namespace, codes)
            first = {} if outline is None else {"error": outline}
            yield SELECTION, {"model": model, "namespace": namespace}, _selection_probes(model, namespace), first


def behaviour_diff(
    grid: Grid,
    other: BehaviourInput,
    invalid: Mapping[ObjectKey, str] | None = None,
) -> list[Difference]:
    """Everything `other` decides differently from the grid's own profile: cells (verdict,
    score of compatible pairs, crash), selections per model and namespace (pick, error) and
    InferenceServices (verdict, runtime, score, error). `invalid`: malformed objects' errors
    by key."""
    old_behaviour, new_behaviour = grid.behaviour, as_behaviour(other)
    if old_behaviour == new_behaviour:
        return []
    new = Grid(grid.models.values(), grid.runtimes.values(), grid.isvcs.values(), behaviour=new_behaviour)
    explainer = _Explainer(grid, old_behaviour, new_behaviour)
    gained = tuple(code for code in explainer.codes if new_behaviour.has(code))
    found: list[Difference] = []
    invalid = invalid or {}
    subjects = list(_subjects(grid, frozenset(explainer.codes)))
    subjects += [(ISVC, {"isvc": key}, _isvc_probes(key, invalid), {}) for key in sorted(grid.isvcs)]
    for subject, where, probes, shortcuts in subjects:
        for field, probe in probes.items():
            shortcut = shortcuts.get(field)
            if shortcut is not None and shortcut(grid) == shortcut(new):
                continue
            before, after = probe(grid), probe(new)
            if before == after:
                continue
            causes, together = explainer.causes(probe, before, after)
            found.append(
                Difference(
                    subject=subject,
                    field=field,
                    before=before,
                    after=after,
                    causes=causes,
                    together=together,
                    gained=gained,
                    **where,  # type: ignore[arg-type]
                )
            )
    return found
