"""Where OME looks for an InferenceService's model and named runtime (spec sections 7 and 10),
and the runtimes it auto-selects from: the lookups of `isvc`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import reasons
from .behaviour import Behaviour
from .grid import Grid
from .named import NamedLookup, find_named
from .results import Selection
from .select import check, model_error, select
from .types import (
    BASE_MODEL,
    CLUSTER_BASE_MODEL,
    InferenceService,
    ObjectKey,
    Runtime,
)


@dataclass(frozen=True)
class IsvcObjects:
    """The objects a service is evaluated against: the grid's models and runtimes, and the
    malformed objects' errors by key."""

    grid: Grid
    invalid: Mapping[ObjectKey, str]

    @property
    def behaviour(self) -> Behaviour:
        return self.grid.behaviour

    def exists(self, key: ObjectKey) -> bool:
        return key in self.grid.models or key in self.invalid

    def in_scope(self, namespace: str) -> list[Runtime]:
        return [rt for rt in self.grid.runtimes.values() if rt.is_cluster or rt.namespace == namespace]


def webhook_model_lookup(objects: IsvcObjects, isvc: InferenceService) -> ObjectKey | None:
    """The webhook, `explain` and OME before U7: the namespace's BaseModel, else the ClusterBaseModel."""
    name = isvc.model_name or ""
    for key in ((BASE_MODEL, isvc.namespace, name), (CLUSTER_BASE_MODEL, "", name)):
        if objects.exists(key):
            return key
    return None


ModelLookup = tuple[ObjectKey | None, str | None, str | None]
"""(model key, None, None), or (None, OME's error, the failure: unsupported-group,
unsupported-kind or model-not-found)."""


def model_lookup(objects: IsvcObjects, isvc: InferenceService) -> ModelLookup:
    """The controller's lookup: since U7 the apiGroup, then the kind decide where it looks
    (ModelReferenceKind and getModelReferenceWithStatus, ome-projects/ome
    `pkg/controller/v1beta1/inferenceservice/utils/reconciliation.go` at 485b7933)."""
    name, namespace = isvc.model_name or "", isvc.namespace
    namespaced: ObjectKey = (BASE_MODEL, namespace, name)
    cluster: ObjectKey = (CLUSTER_BASE_MODEL, "", name)
    by_reference = objects.behaviour.has("U7")
    group, kind = isvc.model_api_group or "", (isvc.model_kind or "") if by_reference else ""
    if by_reference and group not in ("", "ome.io"):
        return None, reasons.model_group_unsupported(group), "unsupported-group"
    if kind == "":
        return _first_found(objects, [namespaced, cluster], reasons.model_not_found(name))
    if kind == BASE_MODEL:
        # No fallback: the API server's NotFound for the BaseModel is the error.
        return _first_found(objects, [namespaced], reasons.base_model_api_not_found(name))
    if kind == CLUSTER_BASE_MODEL:
        return _first_found(objects, [cluster], reasons.model_not_found(name))
    return None, reasons.model_kind_unsupported(kind), "unsupported-kind"


def _first_found(objects: IsvcObjects, candidates: list[ObjectKey], missing: str) -> ModelLookup:
    for key in candidates:
        if objects.exists(key):
            return key, None, None
    return None, missing, "model-not-found"


def named_runtime_lookup(objects: IsvcObjects, isvc: InferenceService) -> NamedLookup:
    """The named runtime as this OME resolves it (`matching.named.find_named`), or OME's error."""
    name, namespace = isvc.runtime_name or "", isvc.namespace
    return find_named(name, namespace, isvc.runtime_kind, objects.grid.runtimes, objects.behaviour)


def needs_isvc_checks(isvc: InferenceService) -> bool:
    """Whether the service's accelerator classes or deployment modes can change a verdict."""
    return bool(isvc.accelerator_classes or isvc.engine_mode or isvc.decoder_mode)


def select_for(objects: IsvcObjects, model_key: ObjectKey, isvc: InferenceService) -> Selection:
    """OME's auto-selection for the service: the grid's when the service adds no constraint."""
    if not needs_isvc_checks(isvc):
        return objects.grid.select(model_key, isvc.namespace)
    model = objects.grid.models[model_key]
    return select(model, objects.in_scope(isvc.namespace), isvc, behaviour=objects.behaviour)


def isvc_still_matches(grid: Grid, isvc: InferenceService, model_key: ObjectKey | None, runtime_key: ObjectKey) -> bool:
    """Whether OME would still accept the runtime for the service's model today."""
    runtime = grid.runtimes.get(runtime_key)
    if model_key is None or model_key not in grid.models or runtime is None:
        return False
    model = grid.models[model_key]
    if model_error(model) is not None:
        return False
    if not needs_isvc_checks(isvc):
        return not runtime.is_disabled and grid.verdict(model_key, runtime_key)[0]
    return check(model, runtime, isvc, behaviour=grid.behaviour).compatible
