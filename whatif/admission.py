"""Warnings at admission: the answer of the dashboard's warn-only validating webhook.

The API server sends an AdmissionReview (admission.k8s.io/v1) for a change of a ServingRuntime,
ClusterServingRuntime, BaseModel or ClusterBaseModel. The answer is always `allowed: true`; its
`warnings` (which kubectl and Argo CD print) say what the change would do, from the what-if:
the InferenceServices it moves to another runtime on their next reconcile, the models it leaves
without a runtime, and, for a runtime, what OME's own runtime webhook would refuse
(`matching.admit_runtime`). Nothing of a namespace the caller's token may not read is evaluated
or named. docs/admission.md.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import matching
from access.scope import Scope
from core.errors import DomainError
from inventory.models import CLUSTER_SCOPED, MODEL_KINDS, RUNTIME_KINDS
from inventory.parsed import Inventory, inventory_for
from inventory.selectors import clusters_visible
from matching import ObjectKey

from .errors import WhatIfError
from .results import WhatIfResult
from .services import whatif_inventory

REVIEW_API_VERSION = "admission.k8s.io/v1"
ADMITTED_KINDS = frozenset({*RUNTIME_KINDS, *MODEL_KINDS})
PREFIX = "OME Compat: "
MAX_WARNINGS = 8
"""kubectl prints every warning on its own line; past a few nobody reads them."""


class AdmissionReviewInvalid(DomainError):
    """A body that is not an AdmissionReview v1 request: answered 400, which the API server
    treats as a webhook failure and, with `failurePolicy: Ignore`, lets the change through."""

    code = "invalid_admission_review"


def _field(data: Mapping[str, Any], name: str, kind: type, path: str) -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        raise AdmissionReviewInvalid(f"{path}.{name} must be a {kind.__name__}", field=f"{path}.{name}")
    return value


def review_request(body: Any) -> Mapping[str, Any]:
    """The `request` of an AdmissionReview v1 body; AdmissionReviewInvalid naming the field."""
    if not isinstance(body, Mapping):
        raise AdmissionReviewInvalid("the body must be an AdmissionReview JSON object")
    if body.get("apiVersion") != REVIEW_API_VERSION or body.get("kind") != "AdmissionReview":
        raise AdmissionReviewInvalid(f"expected kind AdmissionReview of apiVersion {REVIEW_API_VERSION}", field="kind")
    request = _field(body, "request", Mapping, "")
    _field(request, "uid", str, "request")
    return request


def review_response(uid: str, warnings: list[str]) -> dict[str, Any]:
    response: dict[str, Any] = {"uid": uid, "allowed": True}
    if warnings:
        response["warnings"] = warnings
    return {"apiVersion": REVIEW_API_VERSION, "kind": "AdmissionReview", "response": response}


def _changed_object(request: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | None]:
    """(operation, the object changed: the old one for a delete), for the operations warned
    about; a namespaced object gets the request's namespace where its metadata has none."""
    operation = request.get("operation")
    obj = request.get("oldObject") if operation == "DELETE" else request.get("object")
    if operation not in ("CREATE", "UPDATE", "DELETE") or not isinstance(obj, Mapping):
        return "", None
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        return "", None
    if obj.get("kind") not in CLUSTER_SCOPED and not metadata.get("namespace"):
        obj = {**obj, "metadata": {**metadata, "namespace": request.get("namespace") or ""}}
    return str(operation), obj


def _key(obj: Mapping[str, Any]) -> ObjectKey | None:
    """The object's key, for the kinds warned about."""
    kind, metadata = obj.get("kind"), obj["metadata"]
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if kind not in ADMITTED_KINDS or not isinstance(name, str) or not isinstance(namespace, str | None):
        return None
    return (str(kind), "" if kind in CLUSTER_SCOPED else namespace or "", name)


def _services_moved(inventory: Inventory, result: WhatIfResult) -> Counter[str | None]:
    """How many auto-selected InferenceServices each changed pick sends where (None: nowhere)."""
    moved_rows = {(row.model, row.namespace): row.new_selected for row in result.rows if row.pick_changed}
    moved: Counter[str | None] = Counter()
    if not moved_rows:
        return moved
    names = {model[2] for model, _ in moved_rows}
    for isvc in inventory.isvcs.values():
        if isvc.names_runtime or isvc.model_name not in names:
            continue
        outcome = matching.evaluate_isvc(inventory.grid, isvc)
        row = None if outcome.model is None else (outcome.model, isvc.namespace)
        if outcome.verdict == matching.SELECTED and row in moved_rows:
            target = moved_rows[row]
            moved[None if target is None else target[2]] += 1
    return moved


def whatif_warnings(inventory: Inventory, result: WhatIfResult) -> list[str]:
    """The what-if in a few sentences (matching.impact_sentences): services moved, models that
    lose or gain their runtime."""
    lost = {
        row.model for row in result.rows if row.old_outcome == "selected" and row.new_outcome not in ("selected", None)
    }
    gained = {
        row.model for row in result.rows if row.old_outcome not in ("selected", None) and row.new_outcome == "selected"
    }
    return matching.impact_sentences(_services_moved(inventory, result), lost, gained)


def _warnings(inventory: Inventory, operation: str, obj: Mapping[str, Any], key: ObjectKey, whole: bool) -> list[str]:
    warnings: list[str] = []
    if operation == "DELETE" and key not in inventory.models and key not in inventory.runtimes:
        return warnings
    if operation != "DELETE" and key[0] in RUNTIME_KINDS:
        admission = matching.admit_runtime(obj, inventory.runtimes.values(), behaviour=inventory.behaviour)
        warnings += [f"OME's runtime webhook refuses this: {error}" for error in admission.errors]
    documents, deletions = ((), [key]) if operation == "DELETE" else ([obj], [])
    result = whatif_inventory(inventory, documents, deletions=deletions, explain=False, lenient=True, whole=whole)
    return warnings + whatif_warnings(inventory, result)


def admission_warnings(cluster_name: str, request: Mapping[str, Any], *, scope: Scope) -> list[str]:
    """The warnings for one AdmissionReview request about the cluster named in the webhook's
    URL; none for a cluster or namespace the scope does not read, or a kind not warned about."""
    operation, obj = _changed_object(request)
    key = None if obj is None else _key(obj)
    cluster = clusters_visible(scope).filter(name=cluster_name).first()
    if obj is None or key is None or cluster is None or not scope.reads(cluster.name, key[1]):
        return []
    inventory = inventory_for(cluster, scope=scope)
    try:
        warnings = _warnings(inventory, operation, obj, key, scope.reads_whole(cluster.name))
    except (WhatIfError, matching.ManifestError) as error:
        warnings = [f"cannot evaluate the change: {error}"]
    return [PREFIX + warning for warning in warnings[:MAX_WARNINGS]]


def admission_review(cluster_name: str, body: Any, *, scope: Scope) -> dict[str, Any]:
    """The AdmissionReview answer to `body`: always allowed. Raises AdmissionReviewInvalid."""
    request = review_request(body)
    return review_response(request["uid"], admission_warnings(cluster_name, request, scope=scope))
