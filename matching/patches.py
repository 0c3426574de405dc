"""Plan the smallest `diffusionPipeline` merge patch that makes a model pass a runtime."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from . import reasons
from .behaviour import DEFAULT_BEHAVIOUR, Behaviour, BehaviourInput, as_behaviour
from .parse import as_model, as_runtime
from .results import PatchPlan
from .rules import entry_checks, first_passing_entry, size_problem
from .score import entry_score
from .select import ModelInput, RuntimeInput
from .types import Component, Entry, Model, Pipeline


def _component_additions(
    label: str, present: Component | None, required: Component
) -> tuple[dict[str, str] | None, list[str]]:
    """What to add to one component, and the recorded values that conflict with the entry."""
    if present is None:
        return required.to_dict(), []
    additions: dict[str, str] = {}
    conflicts = []
    for field in ("library", "type"):
        wanted, recorded = getattr(required, field), getattr(present, field)
        if not wanted or wanted == recorded:
            continue
        if recorded:
            conflicts.append(f"the model records {label} {field} {recorded}, the entry requires {wanted}")
        else:
            additions[field] = wanted
    return (additions or None), conflicts


def plan_pipeline(model: Pipeline | None, required: Pipeline) -> tuple[dict[str, object], list[str]]:
    """The pipeline fields to add (never to change) so that `model` passes `required`."""
    if model is None:
        return required.to_dict(), []
    additions: dict[str, object] = {}
    conflicts: list[str] = []
    if required.class_name is not None and model.class_name != required.class_name:
        if model.class_name is None:
            additions["className"] = required.class_name
        else:
            conflicts.append(
                f"the model records className {model.class_name}, the entry requires {required.class_name}"
            )
    for name, needed in required.components:
        added, found = _component_additions(name, model.component(name), needed)
        conflicts += found
        if added is not None:
            additions[name] = added
    extra: dict[str, object] = {}
    for name, needed in required.additional:
        added, found = _component_additions(name, model.additional_component(name), needed)
        conflicts += found
        if added is not None:
            extra[name] = added
    if extra:
        additions["additionalComponents"] = extra
    return additions, conflicts


def _entry_blockers(model: Model, entry: Entry, behaviour: Behaviour) -> list[str]:
    """Why no pipeline patch can make this entry pass: its failing non-pipeline checks."""
    found = []
    for outcome in entry_checks(model, entry, behaviour):
        if outcome.passed or outcome.check == "pipeline":
            continue
        found.append(outcome.reason or f"the entry has no {outcome.check}")
    return found


def pipeline_patch(
    model: ModelInput, runtime: RuntimeInput, *, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR
) -> PatchPlan:
    """The smallest JSON merge patch `{"spec": {"diffusionPipeline": {...}}}` that makes the model
    pass the runtime, adding only fields the model lacks and the entry requires.

    `.entry` is the entry it targets: the best-scoring entry it can satisfy; on a tie, the one
    needing the smaller patch, then the first. `.patch` is None when the model already passes or nothing can help; `.blocked` then
    says why, per entry. A recorded value that conflicts with the entry is never overwritten.
    """
    model, runtime = as_model(model), as_runtime(runtime)
    profile = as_behaviour(behaviour)
    runtime_blockers = [reasons.RUNTIME_DISABLED] if runtime.is_disabled else []
    size = size_problem(model, runtime, profile)
    if size:
        runtime_blockers.append(size)
    if runtime_blockers:
        return PatchPlan(patch=None, entry=None, blocked=tuple(runtime_blockers), behaviour=profile.name)
    passing = first_passing_entry(model, runtime, profile)
    if passing is not None:
        return PatchPlan(patch=None, entry=passing, blocked=(), behaviour=profile.name)
    if not runtime.entries:
        return PatchPlan(patch=None, entry=None, blocked=(reasons.NO_SUPPORTED_FORMATS,), behaviour=profile.name)
    candidates: list[tuple[int, int, int, dict[str, object]]] = []
    blocked: list[str] = []
    for index, entry in enumerate(runtime.entries):
        problems = _entry_blockers(model, entry, profile)
        additions: dict[str, object] = {}
        if entry.pipeline is not None:
            additions, conflicts = plan_pipeline(model.pipeline, entry.pipeline)
            problems += conflicts
        if problems:
            blocked += [f"entry {index}: {problem}" for problem in problems]
        else:
            points = entry_score(model, entry, entry.effective_priority, profile)
            candidates.append((-points, _size(additions), index, additions))
    if not candidates:
        return PatchPlan(patch=None, entry=None, blocked=tuple(blocked), behaviour=profile.name)
    _, _, index, additions = min(candidates, key=lambda item: item[:3])
    return PatchPlan(patch={"spec": {"diffusionPipeline": additions}}, entry=index, blocked=(), behaviour=profile.name)


def _size(patch: Mapping[str, Any]) -> int:
    """How many fields a patch sets (an empty object counts as one)."""
    return sum(_size(value) if isinstance(value, Mapping) and value else 1 for value in patch.values())


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch, as `kubectl patch --type merge` applies it (a new value)."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
