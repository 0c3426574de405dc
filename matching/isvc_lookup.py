"""Where OME looks for an InferenceService's model and named runtime (spec sections 7 and 10),
and the runtimes it auto-selects from: the lookups of `isvc`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import reasons
from .grid import Grid
from .results import Selection
from .select import select
from .types import (
    BASE_MODEL,
    CLUSTER_BASE_MODEL,
    CLUSTER_SERVING_RUNTIME,
    SERVING_RUNTIME,
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

    def exists(self, key: ObjectKey) -> bool:
        return key in self.grid.models or key in self.invalid

    def in_scope(self, namespace: str) -> list[Runtime]:
        return [rt for rt in self.grid.runtimes.values() if rt.is_cluster or rt.namespace == namespace]


def legacy_model_lookup(objects: IsvcObjects, isvc: InferenceService) -> ObjectKey | None:
    """OME v1.2, the webhook and `explain`: the namespace's BaseModel, else the ClusterBaseModel."""
    name = isvc.model_name or ""
    for key in ((BASE_MODEL, isvc.namespace, name), (CLUSTER_BASE_MODEL, "", name)):
        if objects.exists(key):
            return key
    return None


def model_lookup(objects: IsvcObjects, isvc: InferenceService) -> tuple[ObjectKey | None, str | None]:
    """Newer OME's controller (U7): (model key, None), or (None, OME's error)."""
    name = isvc.model_name or ""
    kind = isvc.model_kind or ""
    if kind == BASE_MODEL:
        candidates: list[ObjectKey] = [(BASE_MODEL, isvc.namespace, name)]
    elif kind == CLUSTER_BASE_MODEL:
        candidates = [(CLUSTER_BASE_MODEL, "", name)]
    elif kind == "":
        candidates = [(BASE_MODEL, isvc.namespace, name), (CLUSTER_BASE_MODEL, "", name)]
    else:
        return None, reasons.model_kind_unsupported(kind)
    for key in candidates:
        if objects.exists(key):
            return key, None
    return None, reasons.model_not_found(name)


def runtime_candidates(name: str, namespace: str, kind: str | None) -> list[ObjectKey]:
    namespaced = (SERVING_RUNTIME, namespace, name)
    cluster = (CLUSTER_SERVING_RUNTIME, "", name)
    if kind == SERVING_RUNTIME:
        return [namespaced]
    if kind == CLUSTER_SERVING_RUNTIME:
        return [cluster, namespaced]
    return [namespaced, cluster]


def named_runtime_lookup(objects: IsvcObjects, isvc: InferenceService) -> tuple[Runtime | None, str]:
    """The named runtime by `spec.runtime.kind` (U4; no kind: the namespace first) and the
    not-found text OME gives when it is missing."""
    name, namespace, kind = isvc.runtime_name or "", isvc.namespace, isvc.runtime_kind
    for key in runtime_candidates(name, namespace, kind):
        runtime = objects.grid.runtimes.get(key)
        if runtime is not None:
            return runtime, ""
    if kind == SERVING_RUNTIME:
        return None, reasons.serving_runtime_not_found(name, namespace)
    return None, reasons.runtime_not_found(name, namespace)


def needs_isvc_checks(isvc: InferenceService) -> bool:
    """Whether the service's accelerator classes or deployment modes can change a verdict."""
    return bool(isvc.accelerator_classes or isvc.engine_mode or isvc.decoder_mode)


def select_for(objects: IsvcObjects, model_key: ObjectKey, isvc: InferenceService) -> Selection:
    """OME's auto-selection for the service: the grid's when the service adds no constraint."""
    if not needs_isvc_checks(isvc):
        return objects.grid.select(model_key, isvc.namespace)
    return select(objects.grid.models[model_key], objects.in_scope(isvc.namespace), isvc)
