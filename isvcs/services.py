"""InferenceService verdicts: the model each service resolves to, the runtime it names or OME
would pick for it now, OME's exact error when that fails, and whether OME would decide
differently today than when it decided.

Rules (spec sections 5, 7 and 10):

- Model lookup: newer OME's controller honours `spec.model.kind` (U7: `BaseModel` -> the
  namespace's BaseModel only, `ClusterBaseModel` -> the ClusterBaseModel only, absent -> the
  BaseModel first, then the ClusterBaseModel). The admission webhook, `kubectl ome runtime
  explain` and OME v1.2 ignore the kind and look in the namespace first; `legacy_model` says
  what they resolve to, and a note flags the difference.
- A named runtime is looked up by `spec.runtime.kind` (U4) and checked with ValidateRuntime.
  Newer OME uses an incompatible named runtime anyway, with an advisory (U5): verdict
  `advisory`, "used anyway (advisory)". Blocking: runtime not found, disabled, a model without
  a format, a Sharded model. OME v1.2 blocks every failure (`legacy_verdict`).
- Otherwise OME auto-selects with the service's accelerator classes and deployment modes.
- OME does not re-check a service when a model changes (Q30, U6). The first verdict seen is
  stored (InferenceServiceVerdict) and compared with today's; the service's status conditions
  (RuntimeReady, Ready) take precedence where the object has them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

import matching
from inventory.models import Cluster, Kind, Resource
from inventory.parsed import Inventory, load_inventory
from matching import entry_could_match, key_dict, key_text, reasons
from matching.rules import SHARDED
from matching.select import model_error
from matching.types import InferenceService, Model, ObjectKey, Runtime

from .models import InferenceServiceVerdict

__all__ = [
    "ADVISORY",
    "BLOCKED",
    "NAMED",
    "SELECTED",
    "FirstVerdict",
    "IsvcVerdict",
    "Observed",
    "evaluate_isvcs",
    "isvc_verdicts",
    "isvc_verdicts_refresh",
]

SELECTED = "selected"
"""OME auto-selects a runtime."""
NAMED = "named"
"""The runtime named in spec.runtime is valid for the model."""
ADVISORY = "advisory"
"""The named runtime does not declare support for the model; newer OME uses it anyway."""
BLOCKED = "blocked"
"""OME does not deploy: no model, no runtime, a disabled one, an invalid model, …"""

LABELS = {
    SELECTED: "auto-selected",
    NAMED: "named runtime accepted",
    ADVISORY: "used anyway (advisory)",
    BLOCKED: "blocking",
}

# Drift: how OME would decide differently today.
WOULD_NOW_SUCCEED = "would-now-succeed"
NO_LONGER_MATCHES = "no-longer-matches"
WOULD_PICK_DIFFERENTLY = "would-pick-differently"

REAPPLY = "re-apply the InferenceService: OME does not re-check it when a model changes"

MODEL_NOT_FOUND = "No BaseModel or ClusterBaseModel with the name: {name}"
LEAN_WITHOUT_RUNTIME = "InferenceService must specify spec.runtime when spec.model is omitted"


def _key_list(key: ObjectKey | None) -> list[str] | None:
    return None if key is None else list(key)


def _key_from(value: Any) -> ObjectKey | None:
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return (str(value[0]), str(value[1]), str(value[2]))
    return None


@dataclass(frozen=True)
class Observed:
    """What the object's status says OME did (conditions; None when absent)."""

    ready: str | None = None
    runtime_ready: str | None = None
    reason: str | None = None
    message: str | None = None

    @property
    def present(self) -> bool:
        return self.ready is not None or self.runtime_ready is not None

    @property
    def rejected(self) -> bool:
        return self.runtime_ready == "False"

    @property
    def running(self) -> bool:
        return self.ready == "True"

    def to_dict(self) -> dict[str, object]:
        return {"ready": self.ready, "runtimeReady": self.runtime_ready, "reason": self.reason, "message": self.message}


def observed_from(obj: Mapping[str, Any] | None) -> Observed:
    status = obj.get("status") if isinstance(obj, Mapping) else None
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    found: dict[str, Mapping[str, Any]] = {}
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and isinstance(condition.get("type"), str):
            found[condition["type"]] = condition
    ready, runtime_ready = found.get("Ready"), found.get("RuntimeReady")

    def text(condition: Mapping[str, Any] | None, name: str) -> str | None:
        value = condition.get(name) if condition is not None else None
        return value if isinstance(value, str) else None

    source = runtime_ready or ready
    return Observed(
        ready=text(ready, "status"),
        runtime_ready=text(runtime_ready, "status"),
        reason=text(source, "reason"),
        message=text(source, "message"),
    )


@dataclass(frozen=True)
class FirstVerdict:
    """The verdict recorded when the service was first seen (or last changed)."""

    verdict: str
    runtime: ObjectKey | None
    failure: str
    error: str
    at: str

    def to_dict(self) -> dict[str, object]:
        return {
            "verdict": self.verdict,
            "runtime": key_dict(self.runtime),
            "failure": self.failure or None,
            "error": self.error or None,
            "at": self.at,
        }


@dataclass(frozen=True)
class IsvcVerdict:
    """One InferenceService: what OME does with it now, and how that differs from before.

    `verdict`: selected | named | advisory | blocked (`label` in words). `failure` (blocked
    only): invalid-manifest, no-model, unsupported-kind, model-not-found, model-invalid,
    model-disabled, runtime-not-found, runtime-disabled, sharded, no-runtime. `error`: OME's
    exact text (ValidateRuntime, SelectRuntime or the model lookup); `event`: the Event reason
    and message newer OME records. `legacy_verdict`/`legacy_error`: OME v1.2 (kinds ignored,
    every named-runtime failure blocks). `drift`: would-now-succeed | no-longer-matches |
    would-pick-differently, judged from `observed` when the status has conditions, else from
    `first`. `fix`: a short hint.
    """

    namespace: str
    name: str
    uid: str
    model: ObjectKey | None
    legacy_model: ObjectKey | None
    runtime: ObjectKey | None
    runtime_named: bool
    score: int | None
    verdict: str
    failure: str | None
    error: str | None
    event: tuple[str, str] | None
    legacy_verdict: str
    legacy_error: str | None
    observed: Observed
    spec_hash: str
    first: FirstVerdict | None = None
    drift: str | None = None
    drift_basis: str | None = None
    fix: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def key(self) -> ObjectKey:
        return (Kind.INFERENCE_SERVICE.value, self.namespace, self.name)

    @property
    def label(self) -> str:
        return LABELS[self.verdict]

    @property
    def ok(self) -> bool:
        return self.verdict != BLOCKED

    def to_dict(self) -> dict[str, object]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "model": key_dict(self.model),
            "legacyModel": key_dict(self.legacy_model),
            "runtime": key_dict(self.runtime),
            "runtimeNamed": self.runtime_named,
            "score": self.score,
            "verdict": self.verdict,
            "label": self.label,
            "failure": self.failure,
            "error": self.error,
            "event": None if self.event is None else {"reason": self.event[0], "message": self.event[1]},
            "legacyVerdict": self.legacy_verdict,
            "legacyError": self.legacy_error,
            "observed": self.observed.to_dict() if self.observed.present else None,
            "first": None if self.first is None else self.first.to_dict(),
            "drift": self.drift,
            "driftBasis": self.drift_basis,
            "fix": self.fix,
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------------------------
# Lookups


def _exists(inventory: Inventory, key: ObjectKey) -> bool:
    return key in inventory.models or key in inventory.invalid


def legacy_model_key(inventory: Inventory, isvc: InferenceService) -> ObjectKey | None:
    """OME v1.2, the webhook and `explain`: the namespace's BaseModel, else the ClusterBaseModel."""
    name = isvc.model_name or ""
    for key in ((Kind.BASE_MODEL.value, isvc.namespace, name), (Kind.CLUSTER_BASE_MODEL.value, "", name)):
        if _exists(inventory, key):
            return key
    return None


def model_key_for(inventory: Inventory, isvc: InferenceService) -> tuple[ObjectKey | None, str | None]:
    """Newer OME's controller (U7): (model key, None), or (None, OME's error)."""
    name = isvc.model_name or ""
    kind = isvc.model_kind or ""
    if kind == Kind.BASE_MODEL:
        candidates: list[ObjectKey] = [(Kind.BASE_MODEL.value, isvc.namespace, name)]
    elif kind == Kind.CLUSTER_BASE_MODEL:
        candidates = [(Kind.CLUSTER_BASE_MODEL.value, "", name)]
    elif kind == "":
        candidates = [(Kind.BASE_MODEL.value, isvc.namespace, name), (Kind.CLUSTER_BASE_MODEL.value, "", name)]
    else:
        return None, f'unsupported Model kind "{kind}"'
    for key in candidates:
        if _exists(inventory, key):
            return key, None
    return None, MODEL_NOT_FOUND.format(name=name)


def _runtime_candidates(name: str, namespace: str, kind: str | None) -> list[ObjectKey]:
    namespaced = (Kind.SERVING_RUNTIME.value, namespace, name)
    cluster = (Kind.CLUSTER_SERVING_RUNTIME.value, "", name)
    if kind == Kind.SERVING_RUNTIME:
        return [namespaced]
    if kind == Kind.CLUSTER_SERVING_RUNTIME:
        return [cluster, namespaced]
    return [namespaced, cluster]


def runtime_for(inventory: Inventory, isvc: InferenceService) -> tuple[Runtime | None, str]:
    """The named runtime by `spec.runtime.kind` (U4; no kind: the namespace first) and the
    not-found text OME gives when it is missing."""
    name, namespace, kind = isvc.runtime_name or "", isvc.namespace, isvc.runtime_kind
    for key in _runtime_candidates(name, namespace, kind):
        runtime = inventory.runtimes.get(key)
        if runtime is not None:
            return runtime, ""
    if kind == Kind.SERVING_RUNTIME:
        return None, f"ServingRuntime {name} not found in namespace {namespace}"
    return None, reasons.runtime_not_found(name, namespace)


def _needs_isvc_checks(isvc: InferenceService) -> bool:
    """Whether the service's accelerator classes or deployment modes can change a verdict."""
    return bool(isvc.accelerator_classes or isvc.engine_mode or isvc.decoder_mode)


def _in_scope(inventory: Inventory, namespace: str) -> list[Runtime]:
    return [rt for rt in inventory.runtimes.values() if rt.is_cluster or rt.namespace == namespace]


def select_for(inventory: Inventory, model_key: ObjectKey, isvc: InferenceService) -> matching.Selection:
    """OME's auto-selection for the service: the grid when the service adds no constraint."""
    if not _needs_isvc_checks(isvc):
        return inventory.grid.select(model_key, isvc.namespace)
    return matching.select(inventory.models[model_key], _in_scope(inventory, isvc.namespace), isvc)


# --------------------------------------------------------------------------------------------
# One service


@dataclass
class _Draft:
    model: ObjectKey | None = None
    legacy_model: ObjectKey | None = None
    runtime: ObjectKey | None = None
    runtime_named: bool = False
    score: int | None = None
    verdict: str = BLOCKED
    failure: str | None = None
    error: str | None = None
    event: tuple[str, str] | None = None
    fix: str | None = None
    notes: list[str] = field(default_factory=list)

    def block(self, failure: str, error: str, event: tuple[str, str] | None, fix: str | None = None) -> _Draft:
        self.verdict, self.failure, self.error, self.event, self.fix = BLOCKED, failure, error, event, fix
        return self


def _kind_notes(inventory: Inventory, isvc: InferenceService, draft: _Draft) -> None:
    """U7: flag a model reference whose kind makes newer OME resolve it differently."""
    if draft.model == draft.legacy_model or not isvc.model_name:
        return
    name = isvc.model_name
    if draft.legacy_model is not None and draft.legacy_model[0] == Kind.BASE_MODEL:
        found = "" if draft.model is not None else " (which does not exist)"
        draft.notes.append(
            f"BaseModel {isvc.namespace}/{name} is referenced without kind: BaseModel: the admission webhook and "
            f"OME v1.2 use it, newer OME's controller looks only for the ClusterBaseModel {name}{found}"
        )
        draft.fix = "set spec.model.kind: BaseModel"
    elif draft.model is None and draft.legacy_model is not None:
        draft.notes.append(
            f"spec.model.kind is {isvc.model_kind}, but only {key_text(draft.legacy_model)} exists: newer OME's "
            "controller does not fall back to the other scope"
        )
        draft.fix = f"set spec.model.kind: {draft.legacy_model[0]}"


def _pipeline_fix(model: Model, runtime: Runtime) -> str | None:
    if not any(entry.pipeline is not None for entry in runtime.entries):
        return None
    plan = matching.pipeline_patch(model, runtime)
    if plan.patch is None:
        return None
    patch = json.dumps(plan.patch, separators=(",", ":"), sort_keys=True)
    return f"patch the model's diffusionPipeline ({patch}) so that {runtime.name} matches it"


def _no_runtime_fix(
    inventory: Inventory, model_key: ObjectKey, model: Model, selection: matching.Selection, isvc: InferenceService
) -> str:
    if selection.manual_keys:
        names = [
            key[2] for key in sorted(selection.manual_keys, key=lambda key: (key[0] != Kind.SERVING_RUNTIME, key[2]))
        ]
        listed = ", ".join(names[:3]) + (f" (or one of {len(names) - 3} more)" if len(names) > 3 else "")
        if len(names) == 1:
            return f"set autoSelect: true on runtime {listed} or name it in spec.runtime.name (it matches but is manual-only)"
        return (
            f"set autoSelect: true on one of the runtimes {listed} or name it in spec.runtime.name "
            "(they match but are manual-only)"
        )
    scope = sorted(_in_scope(inventory, isvc.namespace), key=lambda rt: (rt.is_cluster, rt.name))
    candidates = [rt for rt in scope if any(entry_could_match(entry, model) for entry in rt.entries)]
    for runtime in candidates:
        hint = None if runtime.is_disabled else _pipeline_fix(model, runtime)
        if hint:
            return hint
    if _needs_isvc_checks(isvc):
        for runtime in candidates:
            if not runtime.is_disabled and inventory.grid.verdict(model_key, runtime.key)[0]:
                return (
                    f"runtime {runtime.name} matches the model but not the service's accelerator class or "
                    "deployment mode: add the class to its acceleratorRequirements, or change the service"
                )
    for runtime in candidates:
        if runtime.is_disabled and matching.check(model, dataclasses.replace(runtime, disabled=False)).compatible:
            return f"enable runtime {runtime.name} (it is disabled) or add a runtime for the model"
    return "no runtime in scope matches the model: see the excluded runtimes in OME's error"


def _named(
    inventory: Inventory,
    isvc: InferenceService,
    model: Model | None,
    draft: _Draft,
    *,
    legacy: bool,
    pinned: bool = False,
) -> _Draft:
    name = isvc.runtime_name or ""
    spec_model = isvc.model_name or ""
    draft.runtime_named = True
    runtime, missing = runtime_for(inventory, isvc)
    if runtime is None:
        other = next(
            (
                inventory.runtimes[key]
                for key in _runtime_candidates(name, isvc.namespace, None)
                if key in inventory.runtimes
            ),
            None,
        )
        fix = (
            f"set spec.runtime.kind: {other.kind}"
            if other is not None
            else f"create runtime {name} or fix spec.runtime.name"
        )
        event = ("RuntimeNotFound", missing)
        if legacy:
            event = ("RuntimeValidationError", f"Runtime {name} does not support model {spec_model}: {missing}")
        return draft.block("runtime-not-found", missing, event, fix)
    draft.runtime = runtime.key
    if model is None or pinned:  # the lean path (U8), or a pinned revision (U5): no validation
        if runtime.is_disabled:
            text = reasons.runtime_disabled(name, is_cluster=runtime.is_cluster)
            return draft.block(
                "runtime-disabled",
                text,
                ("RuntimeValidationError", f"Runtime {name} failed validation: {text}"),
                f"enable runtime {name} or name another runtime",
            )
        draft.verdict = NAMED
        draft.notes.append(
            "spec.runtime.autoSync is false: OME uses the pinned runtime revision without validating it"
            if pinned
            else "no spec.model: OME runs the named runtime without selection or validation"
        )
        return draft
    error = matching.validate(name, model, [runtime], isvc)
    if error is None:
        draft.verdict = NAMED
        return draft
    blocking = ("RuntimeValidationError", f"Runtime {name} does not support model {spec_model}: {error}")
    if error == model_error(model):
        return draft.block("model-invalid", error, blocking, f"set spec.modelFormat on model {spec_model}")
    if runtime.is_disabled:
        return draft.block("runtime-disabled", error, blocking, f"enable runtime {name} or name another runtime")
    if model.distribution == SHARDED:
        return draft.block(
            "sharded",
            error,
            blocking,
            "set distribution: PerNode on the model: no model cache provider is configured for Sharded models",
        )
    fix = _pipeline_fix(model, runtime) or (
        f"name a runtime that declares support for the model, or add an entry for it to {name}"
    )
    if legacy:
        return draft.block("incompatible", error, blocking, fix)
    draft.verdict, draft.error, draft.fix = ADVISORY, error, fix
    draft.event = (
        "RuntimeCompatibilityAdvisory",
        f"Runtime {name} does not declare support for model {spec_model} ({error}); proceeding because the "
        "runtime was named explicitly",
    )
    return draft


def _auto(
    inventory: Inventory, isvc: InferenceService, model_key: ObjectKey, model: Model, draft: _Draft, *, legacy: bool
) -> _Draft:
    selection = select_for(inventory, model_key, isvc)
    if selection.compatible:
        best = selection.compatible[0]
        draft.runtime, draft.score, draft.verdict = best.key, best.score, SELECTED
        return draft
    error = selection.error or ""
    event = ("RuntimeNotFound", error)
    if legacy:
        event = ("RuntimeSelectionError", f"Failed to find runtime for model {isvc.model_name}: {error}")
    return draft.block("no-runtime", error, event, _no_runtime_fix(inventory, model_key, model, selection, isvc))


def _evaluate(inventory: Inventory, isvc: InferenceService, *, legacy: bool = False, pinned: bool = False) -> _Draft:
    """One service under newer OME's rules, or with `legacy` under OME v1.2's: kinds ignored
    (namespace first), every failure of a named runtime blocks, no pinning."""
    if legacy:
        isvc = dataclasses.replace(isvc, model_kind=None, runtime_kind=None)
    draft = _Draft()
    spec_model = isvc.model_name or ""
    if not spec_model:
        if isvc.names_runtime and not legacy:
            return _named(inventory, isvc, None, draft, legacy=legacy)
        error = "model reference is required" if legacy else LEAN_WITHOUT_RUNTIME
        reason = "ModelReconcileError" if legacy else "RuntimeSelectionError"
        return draft.block("no-model", error, (reason, error), "set spec.model.name or spec.runtime.name")
    draft.legacy_model = legacy_model_key(inventory, isvc)
    model_key, lookup_error = model_key_for(inventory, isvc)
    draft.model = model_key
    if model_key is None:
        error = lookup_error or MODEL_NOT_FOUND.format(name=spec_model)
        failure = "unsupported-kind" if error.startswith("unsupported") else "model-not-found"
        return draft.block(
            failure, error, ("ModelReconcileError", error), f"create model {spec_model} or fix spec.model.name"
        )
    if model_key in inventory.invalid:
        error = f"{key_text(model_key)} is malformed: {inventory.invalid[model_key]}"
        return draft.block("model-invalid", error, None, "fix the model's manifest")
    model = inventory.models[model_key]
    if model.disabled is True:
        error = f"specified base model {spec_model} is disabled"
        return draft.block("model-disabled", error, ("ModelReconcileError", error), f"enable model {spec_model}")
    if isvc.names_runtime:
        return _named(inventory, isvc, model, draft, legacy=legacy, pinned=pinned and not legacy)
    invalid = model_error(model)
    if invalid is not None:
        return draft.block(
            "model-invalid",
            invalid,
            ("RuntimeSelectionError", f"Failed to find runtime for model {spec_model}: {invalid}"),
            f"set spec.modelFormat on model {spec_model}: the model agent records nothing for vendor:// and "
            "unreadable models",
        )
    return _auto(inventory, isvc, model_key, model, draft, legacy=legacy)


# --------------------------------------------------------------------------------------------
# Drift


def _still_matches(
    inventory: Inventory, isvc: InferenceService, model_key: ObjectKey | None, runtime_key: ObjectKey
) -> bool:
    runtime = inventory.runtimes.get(runtime_key)
    if model_key is None or model_key not in inventory.models or runtime is None:
        return False
    model = inventory.models[model_key]
    if model_error(model) is not None:
        return False
    if not _needs_isvc_checks(isvc):
        return not runtime.is_disabled and inventory.grid.verdict(model_key, runtime_key)[0]
    return matching.check(model, runtime, isvc).compatible


def _drift(
    inventory: Inventory, isvc: InferenceService, draft: _Draft, observed: Observed, first: FirstVerdict | None
) -> tuple[str | None, str | None, str | None]:
    """(drift, basis, fix): how OME would decide differently today. A RuntimeReady=False or
    Ready=True condition says what OME did; otherwise the first recorded verdict does."""
    ok = draft.verdict != BLOCKED
    if observed.rejected:
        return (WOULD_NOW_SUCCEED, "status", REAPPLY) if ok else (None, None, None)
    if observed.running:
        ran_with = first.runtime if first is not None else (draft.runtime if draft.runtime_named else None)
        return _changed_since(inventory, isvc, draft, ran_with, first, "status")
    if first is None:
        return None, None, None
    if first.verdict == BLOCKED:
        return (WOULD_NOW_SUCCEED, "first-seen", REAPPLY) if ok else (None, None, None)
    return _changed_since(inventory, isvc, draft, first.runtime, first, "first-seen")


def _changed_since(
    inventory: Inventory,
    isvc: InferenceService,
    draft: _Draft,
    ran_with: ObjectKey | None,
    first: FirstVerdict | None,
    basis: str,
) -> tuple[str | None, str | None, str | None]:
    """For a service that was deployed (running, or accepted when first seen)."""
    if draft.verdict == BLOCKED:
        return NO_LONGER_MATCHES, basis, draft.fix
    if draft.verdict == ADVISORY and (first is None or first.verdict == NAMED):
        return NO_LONGER_MATCHES, basis, draft.fix
    if draft.runtime_named or ran_with is None or ran_with == draft.runtime:
        return None, None, None
    if _still_matches(inventory, isvc, draft.model, ran_with):
        return WOULD_PICK_DIFFERENTLY, basis, _repick_fix(draft)
    return NO_LONGER_MATCHES, basis, _repick_fix(draft)


def _repick_fix(draft: _Draft) -> str:
    runtime = draft.runtime[2] if draft.runtime else "another runtime"
    return f"re-apply the InferenceService to move it to {runtime}: OME does not re-check it when a model changes"


# --------------------------------------------------------------------------------------------
# All services


def spec_hash(obj: Mapping[str, Any] | None) -> str:
    """What makes OME decide again: the spec, labels and annotations."""
    if not isinstance(obj, Mapping):
        return ""
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        metadata = {}
    relevant = {"spec": obj.get("spec"), "labels": metadata.get("labels"), "annotations": metadata.get("annotations")}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()


def _pinned(obj: Mapping[str, Any] | None) -> bool:
    """`spec.runtime.autoSync: false` (newer OME): the runtime comes from a stored revision."""
    spec = obj.get("spec") if isinstance(obj, Mapping) else None
    runtime = spec.get("runtime") if isinstance(spec, Mapping) else None
    return isinstance(runtime, Mapping) and runtime.get("autoSync") is False


def _uid(obj: Mapping[str, Any] | None) -> str:
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    uid = metadata.get("uid") if isinstance(metadata, Mapping) else None
    return str(uid or "")


def evaluate_isvcs(
    inventory: Inventory,
    objects: Mapping[ObjectKey, Mapping[str, Any]] | None = None,
    first_seen: Mapping[tuple[str, str, str], FirstVerdict] | None = None,
) -> list[IsvcVerdict]:
    """Verdicts for every InferenceService of an Inventory. `objects`: the raw objects (for the
    uid and status conditions); `first_seen`: recorded first verdicts by (namespace, name, uid)."""
    objects = objects or {}
    first_seen = first_seen or {}
    keys = sorted(set(inventory.isvcs) | {key for key in inventory.invalid if key[0] == Kind.INFERENCE_SERVICE})
    verdicts = []
    for key in keys:
        obj = objects.get(key)
        uid, observed, digest = _uid(obj), observed_from(obj), spec_hash(obj)
        first = first_seen.get((key[1], key[2], uid))
        isvc = inventory.isvcs.get(key)
        if isvc is None:
            error = inventory.invalid[key]
            verdicts.append(
                IsvcVerdict(
                    namespace=key[1],
                    name=key[2],
                    uid=uid,
                    model=None,
                    legacy_model=None,
                    runtime=None,
                    runtime_named=False,
                    score=None,
                    verdict=BLOCKED,
                    failure="invalid-manifest",
                    error=error,
                    event=None,
                    legacy_verdict=BLOCKED,
                    legacy_error=error,
                    observed=observed,
                    spec_hash=digest,
                    first=first,
                    fix="fix the InferenceService manifest",
                )
            )
            continue
        draft = _evaluate(inventory, isvc, pinned=_pinned(obj))
        _kind_notes(inventory, isvc, draft)
        legacy = _evaluate(inventory, isvc, legacy=True)
        drift, basis, drift_fix = _drift(inventory, isvc, draft, observed, first)
        verdicts.append(
            IsvcVerdict(
                namespace=key[1],
                name=key[2],
                uid=uid,
                model=draft.model,
                legacy_model=draft.legacy_model,
                runtime=draft.runtime,
                runtime_named=draft.runtime_named,
                score=draft.score,
                verdict=draft.verdict,
                failure=draft.failure,
                error=draft.error,
                event=draft.event,
                legacy_verdict=legacy.verdict,
                legacy_error=legacy.error,
                observed=observed,
                spec_hash=digest,
                first=first,
                drift=drift,
                drift_basis=basis,
                fix=drift_fix if drift is not None and drift_fix else draft.fix,
                notes=draft.notes,
            )
        )
    return verdicts


def _objects(cluster: Cluster) -> dict[ObjectKey, Mapping[str, Any]]:
    rows = Resource.objects.filter(cluster=cluster, kind=Kind.INFERENCE_SERVICE).values_list("namespace", "name", "obj")
    return {(Kind.INFERENCE_SERVICE.value, namespace, name): obj for namespace, name, obj in rows}


def _first_seen(records: Iterable[InferenceServiceVerdict]) -> dict[tuple[str, str, str], FirstVerdict]:
    return {
        (record.namespace, record.name, record.uid): FirstVerdict(
            verdict=record.first_verdict,
            runtime=_key_from(record.first_runtime),
            failure=record.first_failure,
            error=record.first_error,
            at=record.first_seen_at.isoformat(),
        )
        for record in records
    }


def isvc_verdicts(cluster: Cluster) -> list[IsvcVerdict]:
    """Every InferenceService of the cluster with today's verdict and its drift from the
    recorded first verdict (read-only; see `isvc_verdicts_refresh`)."""
    records = InferenceServiceVerdict.objects.filter(cluster=cluster)
    return evaluate_isvcs(load_inventory(cluster), _objects(cluster), _first_seen(records))


def isvc_verdicts_refresh(cluster: Cluster) -> list[IsvcVerdict]:
    """Record today's verdicts: a service seen for the first time (or changed since, or
    re-created with a new uid) gets its first verdict; every record gets the current one;
    records of services that are gone are deleted. Call it after matrix updates."""
    inventory = load_inventory(cluster)
    objects = _objects(cluster)
    now = timezone.now()
    with transaction.atomic():
        records = {
            (r.namespace, r.name, r.uid): r
            for r in InferenceServiceVerdict.objects.select_for_update().filter(cluster=cluster)
        }
        current = evaluate_isvcs(inventory, objects)
        seen = set()
        created, updated = [], []
        for verdict in current:
            identity = (verdict.namespace, verdict.name, verdict.uid)
            seen.add(identity)
            values = {
                "current_verdict": verdict.verdict,
                "current_failure": verdict.failure or "",
                "current_runtime": _key_list(verdict.runtime),
                "current_error": verdict.error or "",
            }
            first_values = {
                "first_verdict": verdict.verdict,
                "first_failure": verdict.failure or "",
                "first_runtime": _key_list(verdict.runtime),
                "first_error": verdict.error or "",
            }
            record = records.get(identity)
            if record is None:
                created.append(
                    InferenceServiceVerdict(
                        cluster=cluster,
                        namespace=verdict.namespace,
                        name=verdict.name,
                        uid=verdict.uid,
                        spec_hash=verdict.spec_hash,
                        first_seen_at=now,
                        current_at=now,
                        **first_values,
                        **values,
                    )
                )
                continue
            if record.spec_hash != verdict.spec_hash:
                record.spec_hash = verdict.spec_hash
                record.first_seen_at = now
                for name, value in first_values.items():
                    setattr(record, name, value)
            for name, value in values.items():
                setattr(record, name, value)
            record.current_at = now
            updated.append(record)
        InferenceServiceVerdict.objects.bulk_create(created, batch_size=500)
        InferenceServiceVerdict.objects.bulk_update(
            updated,
            [
                "spec_hash",
                "first_seen_at",
                "first_verdict",
                "first_failure",
                "first_runtime",
                "first_error",
                "current_at",
                "current_verdict",
                "current_failure",
                "current_runtime",
                "current_error",
            ],
            batch_size=500,
        )
        gone = [record.pk for identity, record in records.items() if identity not in seen]
        InferenceServiceVerdict.objects.filter(pk__in=gone).delete()
    return isvc_verdicts(cluster)


def isvc_at_risk(verdict: IsvcVerdict) -> bool:
    """A service OME would not deploy, would use a runtime that does not declare support for its
    model (advisory), or would decide differently today than when it decided."""
    return verdict.verdict in (BLOCKED, ADVISORY) or verdict.drift is not None
