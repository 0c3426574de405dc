"""The fixes the InferenceService verdicts suggest: a pipeline patch, a manual-only runtime to
enable, an accelerator or deployment-mode mismatch, a disabled runtime."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from .behaviour import Behaviour
from .candidates import runtime_could_match
from .isvc_lookup import IsvcObjects, needs_isvc_checks
from .keys import key_text
from .patches import pipeline_patch
from .results import Selection
from .select import check
from .types import BASE_MODEL, SERVING_RUNTIME, InferenceService, Model, ObjectKey, Runtime


def pipeline_fix(model: Model, runtime: Runtime, behaviour: Behaviour) -> str | None:
    if not any(entry.pipeline is not None for entry in runtime.entries):
        return None
    plan = pipeline_patch(model, runtime, behaviour=behaviour)
    if plan.patch is None:
        return None
    patch = json.dumps(plan.patch, separators=(",", ":"), sort_keys=True)
    return f"patch the model's diffusionPipeline ({patch}) so that {runtime.name} matches it"


def _manual_only_fix(manual_keys: Mapping[ObjectKey, str]) -> str:
    names = [key[2] for key in sorted(manual_keys, key=lambda key: (key[0] != SERVING_RUNTIME, key[2]))]
    listed = ", ".join(names[:3]) + (f" (or one of {len(names) - 3} more)" if len(names) > 3 else "")
    if len(names) == 1:
        return (
            f"set autoSelect: true on runtime {listed} or name it in spec.runtime.name (it matches but is manual-only)"
        )
    return (
        f"set autoSelect: true on one of the runtimes {listed} or name it in spec.runtime.name "
        "(they match but are manual-only)"
    )


def no_runtime_fix(
    objects: IsvcObjects, model_key: ObjectKey, model: Model, selection: Selection, isvc: InferenceService
) -> str:
    if selection.manual_keys:
        return _manual_only_fix(selection.manual_keys)
    scope = sorted(objects.in_scope(isvc.namespace), key=lambda rt: (rt.is_cluster, rt.name))
    candidates = [rt for rt in scope if runtime_could_match(rt, model)]
    for runtime in candidates:
        hint = None if runtime.is_disabled else pipeline_fix(model, runtime, objects.behaviour)
        if hint:
            return hint
    if needs_isvc_checks(isvc):
        for runtime in candidates:
            if not runtime.is_disabled and objects.grid.verdict(model_key, runtime.key)[0]:
                return (
                    f"runtime {runtime.name} matches the model but not the service's accelerator class or "
                    "deployment mode: add the class to its acceleratorRequirements, or change the service"
                )
    for runtime in candidates:
        enabled = dataclasses.replace(runtime, disabled=False)
        if runtime.is_disabled and check(model, enabled, behaviour=objects.behaviour).compatible:
            return f"enable runtime {runtime.name} (it is disabled) or add a runtime for the model"
    return "no runtime in scope matches the model: see the excluded runtimes in OME's error"


def kind_hint(
    isvc: InferenceService, model: ObjectKey | None, webhook_model: ObjectKey | None
) -> tuple[str, str] | None:
    """U7: (note, fix) for a model reference whose kind makes the controller resolve it
    differently from the admission webhook, or None."""
    name = isvc.model_name
    if model == webhook_model or not name or webhook_model is None:
        return None
    if webhook_model[0] == BASE_MODEL:
        found = "" if model is not None else " (which does not exist)"
        return (
            f"BaseModel {isvc.namespace}/{name} is referenced without kind: BaseModel: the admission webhook and "
            f"older OME use it, this OME's controller looks only for the ClusterBaseModel {name}{found}",
            "set spec.model.kind: BaseModel",
        )
    if model is None:
        return (
            f"spec.model.kind is {isvc.model_kind}, but only {key_text(webhook_model)} exists: this OME's "
            "controller does not fall back to the other scope",
            f"set spec.model.kind: {webhook_model[0]}",
        )
    return None
