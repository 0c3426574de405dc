"""Two v1.3 rules about an InferenceService's model that selection does not see (spec 10.7).

- PVC: the InferenceService admission webhook looks the model up namespace-first, whatever the
  kind, and refuses a ClusterBaseModel whose storage is `pvc://{namespace}:{claim}/{path}` to a
  service outside `{namespace}` (`validateModelExists` and `validateClusterBaseModelPVCNamespace`,
  ome-projects/ome `pkg/webhook/admission/isvc/inference_service_validation.go` at 58a57f25;
  ome-docs `src/lib/content/concepts/models/base-models.md`: "Whatever the kind, only
  InferenceServices in the claim's namespace can use it"). The object is never created.
- U7c: selection, admission and `kubectl ome runtime explain` find the model namespace-first and
  ignore `spec.model.kind`; only the model-config step honours it (the CRD default is
  ClusterBaseModel). With no model of that kind, OME admits the service, chooses a runtime, then
  creates or updates no workload and records no event or condition; its log says `Failed to get
  referenced ClusterBaseModel` (or `BaseModel`). A BaseModel shadows a same-named
  ClusterBaseModel: services in its namespace get the BaseModel even when they ask for the
  ClusterBaseModel (ome-docs `concepts/models/base-models.md` and
  `guides/troubleshoot/troubleshoot-an-inferenceservice.md`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from . import reasons
from .behaviour import DEFAULT_BEHAVIOUR, BehaviourInput, as_behaviour
from .keys import key_text
from .types import BASE_MODEL, CLUSTER_BASE_MODEL, InferenceService, Model, ObjectKey

PVC_PREFIX = "pvc://"
# ParsePVCStorageURI's namespace check (isValidNamespace, ome `pkg/utils/storage`): lowercase
# letters, digits and hyphens, at most 63, neither first nor last a hyphen.
_NAMESPACE = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")


def pvc_claim_namespace(storage_uri: str | None) -> str | None:
    """The namespace of a `pvc://{namespace}:{claim}/{sub-path}` URI, as OME's
    ParsePVCStorageURI reads it; None for other URIs, for `pvc://{claim}/{sub-path}` and for
    URIs it refuses (no sub-path, no claim, a colon in the claim, an invalid namespace: ome
    `pkg/utils/storage/storage.go`), which the webhook lets pass."""
    if storage_uri is None or not storage_uri.startswith(PVC_PREFIX):
        return None
    first, slash, sub_path = storage_uri.removeprefix(PVC_PREFIX).partition("/")
    namespace, colon, claim = first.partition(":")
    if not (slash and sub_path and colon and claim) or ":" in claim or _NAMESPACE.fullmatch(namespace) is None:
        return None
    return namespace


def pvc_namespace_denial(model: Model, namespace: str, *, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR) -> str | None:
    """OME's admission denial when a service in `namespace` uses `model` (the model the webhook
    finds for it): the exact webhook text, or None when this OME admits it."""
    if not as_behaviour(behaviour).has("PVC") or model.kind != CLUSTER_BASE_MODEL:
        return None
    claim_namespace = pvc_claim_namespace(model.storage_uri)
    if claim_namespace is None or claim_namespace == namespace:
        return None
    return reasons.pvc_namespace(model.name, claim_namespace, namespace)


@dataclass(frozen=True)
class ConfigFailure:
    """Why the model-config step does nothing for a service OME otherwise deploys."""

    failure: str
    """wrong-kind | shadowed"""
    error: str
    fix: str
    note: str


def model_config_failure(
    isvc: InferenceService, found: ObjectKey, exists: Callable[[ObjectKey], bool]
) -> ConfigFailure | None:
    """U7c: what the model-config step makes of the service whose model selection found
    namespace-first (`found`); `exists` says whether a model is in the cluster. The step looks
    up a BaseModel for kind `BaseModel` and a ClusterBaseModel for any other kind
    (`getBaseModelSpec`, ome `reconcilers/modelconfig/modelconfig_reconciler.go`)."""
    name, namespace = isvc.model_name or "", isvc.namespace
    kind = BASE_MODEL if isvc.model_kind == BASE_MODEL else CLUSTER_BASE_MODEL
    wanted: ObjectKey = (BASE_MODEL, namespace, name) if kind == BASE_MODEL else (CLUSTER_BASE_MODEL, "", name)
    if wanted == found:
        return None
    if not exists(wanted):
        return ConfigFailure(
            "wrong-kind",
            reasons.model_config_not_found(kind),
            f"set spec.model.kind: {found[0]}",
            f"spec.model.kind is {isvc.model_kind or CLUSTER_BASE_MODEL}, but only {key_text(found)} exists: OME "
            f"admits the service and chooses a runtime for {key_text(found)}, then creates no workload and records "
            f"no event; only the controller's log says {reasons.model_config_not_found(kind)}",
        )
    return ConfigFailure(
        "shadowed",
        f"{key_text(found)} shadows {key_text(wanted)}: the service gets the BaseModel, not the ClusterBaseModel "
        "it asks for",
        f"rename BaseModel {namespace}/{name} or the ClusterBaseModel: give the two kinds different names",
        f"the service asks for {key_text(wanted)}, but OME uses {key_text(found)} of its namespace for selection, "
        "admission and the workload, and says nothing",
    )
