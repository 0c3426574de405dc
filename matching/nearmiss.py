"""How close a runtime came to being auto-selected for a model: its failed checks, counted.

A near miss is a runtime in scope that OME would not auto-select for the model. Its distance
is the number of checks that stand in the way: the failing checks of its closest entry, plus
the runtime-wide ones (disabled, size range, no entry with autoSelect, a score of 0). "One
check away" is distance 1. The checks are OME's (rules.py); only the counting is added here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from . import reasons
from .behaviour import DEFAULT_BEHAVIOUR, Behaviour, BehaviourInput, as_behaviour
from .parse import as_model, as_runtime
from .rules import entry_checks, size_problem
from .score import runtime_score
from .select import ModelInput, RuntimeInput, in_scope
from .types import Entry, Model, ObjectKey, Runtime


@dataclass(frozen=True, slots=True)
class Miss:
    """One failed check: its name, the values compared (model's first) and OME's phrase."""

    check: str
    model: str | None
    runtime: str | None
    reason: str

    def to_dict(self) -> dict[str, object]:
        return {"check": self.check, "model": self.model, "runtime": self.runtime, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class NearMiss:
    """A runtime OME does not auto-select for the model, and what stands in the way.

    `entry` is the closest entry (fewest failed checks; the first on a tie), None when the
    runtime has no entries. `failed` lists the runtime-wide checks first, then the entry's.
    """

    runtime: ObjectKey
    entry: int | None
    failed: tuple[Miss, ...]

    @property
    def distance(self) -> int:
        return len(self.failed)

    @property
    def checks(self) -> tuple[str, ...]:
        return tuple(miss.check for miss in self.failed)

    def to_dict(self) -> dict[str, object]:
        return {
            "runtime": {"kind": self.runtime[0], "namespace": self.runtime[1], "name": self.runtime[2]},
            "entry": self.entry,
            "distance": self.distance,
            "failed": [miss.to_dict() for miss in self.failed],
        }


def _runtime_wide_misses(model: Model, runtime: Runtime, behaviour: Behaviour) -> list[Miss]:
    found = []
    if runtime.is_disabled:
        found.append(Miss("disabled", None, "disabled: true", reasons.RUNTIME_DISABLED))
    size = size_problem(model, runtime, behaviour)
    if size is not None and runtime.size_range is not None:
        found.append(Miss("size", model.size, runtime.size_range.describe(), size))
    if not runtime.has_auto_select:
        found.append(Miss("autoSelect", None, "no entry sets autoSelect: true", reasons.MANUAL_NO_AUTO_SELECT))
    return found


def _entry_misses(model: Model, entry: Entry, behaviour: Behaviour) -> list[Miss]:
    return [
        Miss(outcome.check, outcome.model, outcome.runtime, outcome.reason or f"the entry has no {outcome.check}")
        for outcome in entry_checks(model, entry, behaviour)
        if not outcome.passed
    ]


def near_miss(
    model: ModelInput, runtime: RuntimeInput, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR
) -> NearMiss | None:
    """What stands between the runtime and being auto-selected for the model (ignoring the
    other runtimes, which only decide the rank); None when nothing does."""
    model, runtime, profile = as_model(model), as_runtime(runtime), as_behaviour(behaviour)
    wide = _runtime_wide_misses(model, runtime, profile)
    if not runtime.entries:
        return NearMiss(
            runtime.key, None, (*wide, Miss("format", model.format.describe(), None, reasons.NO_SUPPORTED_FORMATS))
        )
    misses = [(index, _entry_misses(model, entry, profile)) for index, entry in enumerate(runtime.entries)]
    index, failed = min(misses, key=lambda closest: len(closest[1]))  # the first of the closest
    if not failed and not wide and runtime_score(model, runtime, profile) <= 0:
        failed = [Miss("score", None, "0", reasons.MANUAL_ZERO_SCORE)]
    if not failed and not wide:
        return None
    return NearMiss(runtime.key, index, (*wide, *failed))


def near_misses(
    model: ModelInput,
    runtimes: Iterable[RuntimeInput],
    namespace: str | None = None,
    behaviour: BehaviourInput = DEFAULT_BEHAVIOUR,
) -> tuple[NearMiss, ...]:
    """Every runtime in scope of `namespace` (default: the model's) that OME would not
    auto-select for the model, closest first: by distance, then ServingRuntimes before
    ClusterServingRuntimes, then name."""
    parsed = as_model(model)
    namespaced, cluster = in_scope(
        (as_runtime(item) for item in runtimes), parsed.namespace if namespace is None else namespace
    )
    found = [miss for runtime in namespaced + cluster if (miss := near_miss(parsed, runtime, behaviour)) is not None]
    return tuple(sorted(found, key=lambda miss: (miss.distance, miss.runtime[0] != "ServingRuntime", miss.runtime[2])))
