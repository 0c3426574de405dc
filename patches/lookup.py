"""Finding the model and the runtime a patch request names, and the version it must send back."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

import matching
from access.scope import Scope
from inventory.models import CLUSTER_SCOPED, MODEL_KINDS, RUNTIME_KINDS, Cluster, Resource
from inventory.selectors import resources_visible

from .errors import PatchInvalid, PatchTargetMissing


def model_get(cluster: Cluster, value: Any, *, scope: Scope) -> Resource:
    """A BaseModel or ClusterBaseModel of the cluster that `scope` reads, by id, key or
    (unambiguous) name."""
    return _resource_get(cluster, value, MODEL_KINDS, "model", scope)


def runtime_get(cluster: Cluster, value: Any, *, scope: Scope) -> Resource:
    """A ServingRuntime or ClusterServingRuntime of the cluster, by id, key or name."""
    return _resource_get(cluster, value, RUNTIME_KINDS, "runtime", scope)


def version_of(cluster: Cluster, resource: Resource) -> str:
    """The version a preview hands out and an apply must send back: the object's
    resourceVersion on a live cluster; on a manifest snapshot, whose objects have none that
    changes, a token of the stored content."""
    if cluster.is_live:
        return resource.resource_version
    return f"content-{resource.content_hash[:16]}"


def _resource_get(cluster: Cluster, value: Any, kinds: tuple[str, ...], what: str, scope: Scope) -> Resource:
    if isinstance(value, Resource):
        if value.cluster_id != cluster.pk or value.kind not in kinds or not scope.reads(cluster.name, value.namespace):
            raise PatchInvalid(f"{value} is not a {what} of cluster {cluster}", field=what)
        return value
    # An object the scope may not read is answered as one that does not exist; with its cluster:
    # the plan reads the profile that judges the cluster.
    found = resources_visible(scope).filter(cluster=cluster, kind__in=kinds).select_related("cluster")
    is_id = isinstance(value, int) and not isinstance(value, bool)
    if is_id or (isinstance(value, str) and value.strip().isdecimal()):
        resource = found.filter(pk=int(value)).first()
        if resource is not None:
            return resource
        if is_id:
            raise PatchTargetMissing(f"cluster {cluster} has no {what} with id {value}", field=what)
    # A text of digits that is no id of the cluster may still be a name.
    return _by_reference(cluster, found, value, kinds, what)


def _by_reference(
    cluster: Cluster, found: QuerySet[Resource], value: Any, kinds: tuple[str, ...], what: str
) -> Resource:
    try:
        kind, namespace, name = matching.parse_key_reference(value)
    except ValueError as error:
        raise PatchInvalid(f"the {what}: {error}", field=what) from None
    if kind is not None and kind not in kinds:
        raise PatchInvalid(f"{kind!r} is not a {what} kind ({' or '.join(kinds)})", field=what)
    found = found.filter(name=name)
    if kind is not None:
        found = found.filter(kind=kind)
    if kind in CLUSTER_SCOPED:
        found = found.filter(namespace="")
    elif namespace is not None:
        found = found.filter(namespace=namespace)
    matches = list(found[:6])
    if not matches:
        raise PatchTargetMissing(f"cluster {cluster} has no {what} {value!r}", field=what)
    if len(matches) > 1:
        names = ", ".join(matching.key_path(match.key) for match in matches[:5])
        raise PatchInvalid(f"{value!r} names several {what}s ({names}); give Kind/namespace/name", field=what)
    return matches[0]
