"""Where OME looks for an InferenceService's model and named runtime (spec sections 7 and 10),
and the runtimes it auto-selects from: the lookups of `isvc`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from . import reasons
from .behaviour import Behaviour
from .grid import Grid
from .named import find_named
from .results import Selection
from .select import select
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


def model_lookup(objects: IsvcObjects, isvc: InferenceService) -> tuple[ObjectKey | None, str | None]:
    """The controller's lookup (by kind since U7): (model key, None), or (None, OME's error)."""
    name = isvc.model_name or ""
    kind = (isvc.model_kind or "") if objects.behaviour.has("U7") else ""
    if kind == BASE_MODEL:
        candidates: list[ObjectKey] = [(BASE_MODEL, isvc.namespace, name)]
    elif kind == CLUSTER_BASE_MODEL:
        candidates = [(CLUSTER_BASE_MODEL, "", name)]
    elif kind == "":
        candidates = [(BASE_MODEL, isvc.namespace, name), (CLUSTER_BASE_MODEL, "", name)]
    else:
        return None, reasons.model_kind_unsupported(kind)
    group = isvc.model_api_group or ""
    if objects.behaviour.has("U7") and group not in ("", "ome.io"):
        return None, reasons.model_group_unsupported(group)
    for key in candidates:
        if objects.exists(key):
            return key, None
    return None, reasons.model_not_found(name)


def named_runtime_lookup(objects: IsvcObjects, isvc: InferenceService) -> tuple[Runtime | None, str | None]:
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
