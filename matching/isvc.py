"""What OME does with one InferenceService: the model it resolves to, the runtime it names or
OME would pick for it now, and OME's exact error and event when that fails (spec sections 5,
7 and 10).

Each rule follows the chosen behaviour profile (`matching.behaviour`):

- Model lookup: since U7 the controller refuses an apiGroup other than ome.io, then honours
  `spec.model.kind` (`BaseModel` -> the namespace's BaseModel only, `ClusterBaseModel` -> the
  ClusterBaseModel only, absent -> the BaseModel first, then the ClusterBaseModel). The
  admission webhook, `kubectl ome runtime explain` and older OME ignore the kind and look in
  the namespace first (`webhook_model`); a note flags the difference.
- Since U3w OME waits for a Sharded model that is not Ready before it looks for a runtime:
  verdict `waiting`, not blocked.
- A named runtime is looked up as `validate` does (U4 kind, U9 inheritance) and checked with
  ValidateRuntime. Since U5 OME uses an incompatible named runtime anyway, with an advisory:
  verdict `advisory`; blocking are: runtime not found, an inheritance chain that does not
  resolve, disabled, a model without a format, a Sharded model. Older OME blocks every failure.
- Otherwise OME auto-selects with the service's accelerator classes and deployment modes.
- v1.3 (`matching.isvc_config`): the webhook refuses a pvc:// ClusterBaseModel of another
  namespace (verdict `blocked`, failure pvc-namespace, no event); only the model-config step
  honours the kind, so a service OME would deploy gets verdict `silent` when it finds no model of
  that kind (wrong-kind) or a BaseModel shadows the ClusterBaseModel asked for (shadowed).

The objects come as a `Grid` (its models and runtimes, by key, and its behaviour) and the
keys of malformed objects with their errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from . import reasons
from .behaviour import DEFAULT_BEHAVIOUR, BehaviourInput, as_behaviour
from .grid import Grid
from .isvc_config import model_config_failure, pvc_claim_namespace, pvc_namespace_denial
from .isvc_hints import kind_hint, no_runtime_fix, pipeline_fix
from .isvc_lookup import (
    IsvcObjects,
    model_lookup,
    named_runtime_lookup,
    select_for,
    webhook_model_lookup,
)
from .keys import key_text
from .named import lookup_order
from .readiness import sharded_wait
from .rules import SHARDED
from .select import model_error, validate_found
from .types import (
    InferenceService,
    Model,
    ObjectKey,
    Runtime,
)

SELECTED = "selected"
"""OME auto-selects a runtime."""
NAMED = "named"
"""The runtime named in spec.runtime is valid for the model."""
ADVISORY = "advisory"
"""The named runtime does not declare support for the model; newer OME uses it anyway."""
BLOCKED = "blocked"
"""OME does not deploy: no model, no runtime, a disabled one, an invalid model, …"""
WAITING = "waiting"
"""Newer OME waits for the service's Sharded model to become Ready and checks again (U3w)."""
SILENT = "silent"
"""v1.3 admits the service and chooses a runtime, then its model-config step finds no model of the
requested kind (or a BaseModel shadows it) and OME does nothing, with no event (U7c)."""

LABELS = {
    SELECTED: "auto-selected",
    NAMED: "named runtime accepted",
    ADVISORY: "used anyway (advisory)",
    BLOCKED: "blocking",
    WAITING: "waiting for the model",
    SILENT: "admitted, silently not deployed",
}

Event = tuple[str, str]

# How to fix a model reference that the controller refuses before it looks for a model (U7).
_REFUSED_REFERENCE_FIXES = {
    "unsupported-group": "set spec.model.apiGroup to ome.io or leave it out",
    "unsupported-kind": "set spec.model.kind to BaseModel or ClusterBaseModel or leave it out",
}
"""(reason, message) of the Event newer OME records."""


@dataclass(frozen=True, kw_only=True)
class IsvcOutcome:
    """One InferenceService under one OME (`behaviour`, a profile name).

    `verdict`: selected | named | advisory | blocked | waiting | silent (`label` in words).
    `failure` (blocked): invalid-manifest, no-model, unsupported-group, unsupported-kind,
    model-not-found, model-invalid, model-disabled, pvc-namespace (the admission webhook refuses
    it: no event), runtime-not-found, runtime-chain, runtime-disabled, incompatible, sharded,
    no-runtime; (silent): wrong-kind, shadowed. `error`: OME's exact text (ValidateRuntime,
    SelectRuntime, the model lookup or the webhook; for `waiting`, why the model is not ready;
    for `silent`, the controller's log line, or for shadowed what happens); `event`: the Event
    OME records (for `silent` none about the failure). `webhook_model`: the model the admission webhook
    finds (namespace first, whatever the kind). `fix`: a short hint.
    """

    verdict: str
    behaviour: str
    model: ObjectKey | None = None
    webhook_model: ObjectKey | None = None
    runtime: ObjectKey | None = None
    runtime_named: bool = False
    score: int | None = None
    failure: str | None = None
    error: str | None = None
    event: Event | None = None
    fix: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return LABELS[self.verdict]

    @property
    def ok(self) -> bool:
        """Whether OME deploys the service now (as asked: `silent` is not ok)."""
        return self.verdict not in (BLOCKED, WAITING, SILENT)


@dataclass
class _Draft:
    model: ObjectKey | None = None
    webhook_model: ObjectKey | None = None
    runtime: ObjectKey | None = None
    runtime_named: bool = False
    score: int | None = None
    verdict: str = BLOCKED
    failure: str | None = None
    error: str | None = None
    event: Event | None = None
    fix: str | None = None
    notes: list[str] = field(default_factory=list)

    def block(self, failure: str, error: str, event: Event | None, fix: str | None = None) -> _Draft:
        self.verdict, self.failure, self.error, self.event, self.fix = BLOCKED, failure, error, event, fix
        return self


# --------------------------------------------------------------------------------------------
# One service


def _runtime_missing(objects: IsvcObjects, isvc: InferenceService, missing: str, draft: _Draft) -> _Draft:
    name = isvc.runtime_name or ""
    other = next(
        (
            objects.grid.runtimes[key]
            for key in lookup_order(name, isvc.namespace, None, objects.behaviour)
            if key in objects.grid.runtimes
        ),
        None,
    )
    fix = (
        f"set spec.runtime.kind: {other.kind}"
        if other is not None
        else f"create runtime {name} or fix spec.runtime.name"
    )
    event = (reasons.EVENT_RUNTIME_NOT_FOUND, missing)
    if not objects.behaviour.has("U6"):
        event = (reasons.EVENT_RUNTIME_VALIDATION, reasons.runtime_rejects_model(name, isvc.model_name or "", missing))
    return draft.block("runtime-not-found", missing, event, fix)


def _broken_chain(isvc: InferenceService, model: Model | None, error: str, draft: _Draft) -> _Draft:
    """An inheritance chain that does not resolve (U9) is not RuntimeNotFound: ValidateRuntime
    fails with it, or, without spec.model, the fetch does; OME retries with backoff
    (ome-projects/ome `pkg/controller/v1beta1/inferenceservice/controller.go` at 0df64b72)."""
    name = isvc.runtime_name or ""
    event = (reasons.EVENT_RUNTIME_FETCH, error)
    if model is not None:
        event = (reasons.EVENT_RUNTIME_VALIDATION, reasons.runtime_rejects_model(name, isvc.model_name or "", error))
    return draft.block("runtime-chain", error, event, f"fix the ome.io/inherit-from chain of runtime {name}")


def _unvalidated(runtime: Runtime, draft: _Draft, *, pinned: bool) -> _Draft:
    """The lean path (U8), or a pinned revision (U5): OME runs the runtime without validation."""
    name = runtime.name
    if runtime.is_disabled:
        text = reasons.runtime_disabled(name, is_cluster=runtime.is_cluster)
        return draft.block(
            "runtime-disabled",
            text,
            (reasons.EVENT_RUNTIME_VALIDATION, reasons.validation_failed(name, text)),
            f"enable runtime {name} or name another runtime",
        )
    draft.verdict = NAMED
    draft.notes.append(
        "spec.runtime.autoSync is false: OME uses the pinned runtime revision without validating it"
        if pinned
        else "no spec.model: OME runs the named runtime without selection or validation"
    )
    return draft


def _named(
    objects: IsvcObjects,
    isvc: InferenceService,
    model: Model | None,
    draft: _Draft,
    *,
    pinned: bool = False,
) -> _Draft:
    name = isvc.runtime_name or ""
    spec_model = isvc.model_name or ""
    draft.runtime_named = True
    invalid = None if model is None or pinned else model_error(model)
    if invalid is not None:
        # ValidateRuntime checks the model before it looks the runtime up.
        blocking = (reasons.EVENT_RUNTIME_VALIDATION, reasons.runtime_rejects_model(name, spec_model, invalid))
        return draft.block("model-invalid", invalid, blocking, f"set spec.modelFormat on model {spec_model}")
    found = named_runtime_lookup(objects, isvc)
    runtime = found.runtime
    if runtime is None and found.not_found:
        return _runtime_missing(objects, isvc, found.error or "", draft)
    if runtime is None:
        return _broken_chain(isvc, model, found.error or "", draft)
    draft.runtime = runtime.key
    if model is None or pinned:
        return _unvalidated(runtime, draft, pinned=pinned)
    return _validated(objects, isvc, model, runtime, draft)


def _validated(objects: IsvcObjects, isvc: InferenceService, model: Model, runtime: Runtime, draft: _Draft) -> _Draft:
    """ValidateRuntime's checks of the found runtime, and what this OME does when they fail."""
    name, spec_model = isvc.runtime_name or "", isvc.model_name or ""
    error = validate_found(name, model, runtime, isvc, objects.behaviour)
    if error is None:
        draft.verdict = NAMED
        return draft
    blocking = (reasons.EVENT_RUNTIME_VALIDATION, reasons.runtime_rejects_model(name, spec_model, error))
    if runtime.is_disabled:
        return draft.block("runtime-disabled", error, blocking, f"enable runtime {name} or name another runtime")
    if model.distribution == SHARDED and objects.behaviour.has("U3"):
        return draft.block(
            "sharded",
            error,
            blocking,
            "set distribution: PerNode on the model: no model cache provider is configured for Sharded models",
        )
    fix = pipeline_fix(model, runtime, objects.behaviour) or (
        f"name a runtime that declares support for the model, or add an entry for it to {name}"
    )
    if not objects.behaviour.has("U5"):
        return draft.block("incompatible", error, blocking, fix)
    draft.verdict, draft.error, draft.fix = ADVISORY, error, fix
    draft.event = (reasons.EVENT_ADVISORY, reasons.advisory(name, spec_model, error))
    return draft


def _auto(objects: IsvcObjects, isvc: InferenceService, model_key: ObjectKey, model: Model, draft: _Draft) -> _Draft:
    selection = select_for(objects, model_key, isvc)
    if selection.compatible:
        best = selection.compatible[0]
        draft.runtime, draft.score, draft.verdict = best.key, best.score, SELECTED
        return draft
    error = selection.error or ""
    event = (reasons.EVENT_RUNTIME_NOT_FOUND, error)
    if not objects.behaviour.has("U6"):
        event = (reasons.EVENT_RUNTIME_SELECTION, reasons.selection_failed(isvc.model_name or "", error))
    return draft.block("no-runtime", error, event, no_runtime_fix(objects, model_key, model, selection, isvc))


def _without_model(objects: IsvcObjects, isvc: InferenceService, draft: _Draft) -> _Draft:
    lean = objects.behaviour.has("U8")
    if isvc.names_runtime and lean:
        return _named(objects, isvc, None, draft)
    error = reasons.LEAN_WITHOUT_RUNTIME if lean else reasons.MODEL_REFERENCE_REQUIRED
    event = reasons.EVENT_RUNTIME_SELECTION if lean else reasons.EVENT_MODEL_RECONCILE
    return draft.block("no-model", error, (event, error), "set spec.model.name or spec.runtime.name")


def _waiting(spec_model: str, message: str, draft: _Draft) -> _Draft:
    draft.verdict, draft.error = WAITING, message
    draft.event = (reasons.EVENT_MODEL_NOT_READY, message)
    draft.notes.append(
        f"OME waits for the Sharded model {spec_model} to become Ready (its Ready condition True for its current "
        "generation) and checks again every 5 s; only then does it look for a runtime"
    )
    return draft


def _refused_pvc(objects: IsvcObjects, isvc: InferenceService, draft: _Draft) -> bool:
    """The admission webhook refuses a pvc:// ClusterBaseModel of another namespace: never created."""
    model = objects.grid.models.get(draft.webhook_model) if draft.webhook_model else None
    denial = None if model is None else pvc_namespace_denial(model, isvc.namespace, behaviour=objects.behaviour)
    if model is not None and denial is not None:
        claim = pvc_claim_namespace(model.storage_uri)
        fix = f"move the InferenceService to namespace {claim} or replicate the PVC into namespace {isvc.namespace}"
        draft.block("pvc-namespace", denial, None, fix)
    return denial is not None


def _model_config(objects: IsvcObjects, isvc: InferenceService, draft: _Draft) -> None:
    """U7c: the model-config step of a service OME otherwise deploys."""
    if draft.verdict not in (SELECTED, NAMED, ADVISORY) or draft.model is None:
        return
    found = model_config_failure(isvc, draft.model, objects.exists)
    if found is not None:
        draft.verdict, draft.failure, draft.error, draft.fix = SILENT, found.failure, found.error, found.fix
        draft.notes.append(found.note)


def _evaluate(objects: IsvcObjects, isvc: InferenceService, *, pinned: bool = False) -> _Draft:
    """One service under the objects' OME behaviour."""
    draft = _Draft()
    spec_model = isvc.model_name or ""
    if not spec_model:
        return _without_model(objects, isvc, draft)
    draft.webhook_model = webhook_model_lookup(objects, isvc)
    if _refused_pvc(objects, isvc, draft):
        return draft
    model_key, lookup_error, failure = model_lookup(objects, isvc)
    draft.model = model_key
    if model_key is None:
        error = lookup_error or reasons.model_not_found(spec_model)
        failure = failure or "model-not-found"
        fix = _REFUSED_REFERENCE_FIXES.get(failure, f"create model {spec_model} or fix spec.model.name")
        return draft.block(failure, error, (reasons.EVENT_MODEL_RECONCILE, error), fix)
    if model_key in objects.invalid:
        error = f"{key_text(model_key)} is malformed: {objects.invalid[model_key]}"
        return draft.block("model-invalid", error, None, "fix the model's manifest")
    model = objects.grid.models[model_key]
    if model.disabled is True:
        error = reasons.base_model_disabled(spec_model)
        return draft.block(
            "model-disabled", error, (reasons.EVENT_MODEL_RECONCILE, error), f"enable model {spec_model}"
        )
    waiting = sharded_wait(model, objects.behaviour)
    if waiting is not None:
        return _waiting(spec_model, waiting, draft)
    if isvc.names_runtime:
        return _named(objects, isvc, model, draft, pinned=pinned and objects.behaviour.has("U5"))
    invalid = model_error(model)
    if invalid is not None:
        return draft.block(
            "model-invalid",
            invalid,
            (reasons.EVENT_RUNTIME_SELECTION, reasons.selection_failed(spec_model, invalid)),
            f"set spec.modelFormat on model {spec_model}: the model agent records nothing for vendor:// and "
            "unreadable models",
        )
    return _auto(objects, isvc, model_key, model, draft)


def evaluate_isvc(
    grid: Grid,
    isvc: InferenceService,
    invalid: Mapping[ObjectKey, str] | None = None,
    *,
    pinned: bool | None = None,
    behaviour: BehaviourInput | None = None,
) -> IsvcOutcome:
    """The service under one OME: `behaviour` (default: the grid's, itself by default
    `DEFAULT_BEHAVIOUR`). `invalid`: malformed objects' errors by key; `pinned` (default: the
    service's `spec.runtime.autoSync: false`): the runtime comes from a stored revision (U5)."""
    if behaviour is not None and as_behaviour(behaviour) != grid.behaviour:
        grid = Grid(grid.models.values(), grid.runtimes.values(), grid.isvcs.values(), behaviour=behaviour)
    objects = IsvcObjects(grid, invalid or {})
    draft = _evaluate(objects, isvc, pinned=isvc.pinned if pinned is None else pinned)
    hint = kind_hint(isvc, draft.model, draft.webhook_model) if objects.behaviour.has("U7") else None
    if hint is not None and draft.failure not in _REFUSED_REFERENCE_FIXES:
        draft.notes.append(hint[0])
        draft.fix = hint[1]
    if objects.behaviour.has("U7c"):
        _model_config(objects, isvc, draft)
    return IsvcOutcome(
        verdict=draft.verdict,
        behaviour=objects.behaviour.name,
        model=draft.model,
        webhook_model=draft.webhook_model,
        runtime=draft.runtime,
        runtime_named=draft.runtime_named,
        score=draft.score,
        failure=draft.failure,
        error=draft.error,
        event=draft.event,
        fix=draft.fix,
        notes=tuple(draft.notes),
    )


def invalid_isvc(error: str, *, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR) -> IsvcOutcome:
    """A service whose manifest does not parse: no OME deploys it."""
    return IsvcOutcome(
        verdict=BLOCKED,
        behaviour=as_behaviour(behaviour).name,
        failure="invalid-manifest",
        error=error,
        fix="fix the InferenceService manifest",
    )
