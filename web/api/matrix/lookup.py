"""The query of matrix/cell and matrix/selection: a model (and a runtime) by id, or by name with
kind and namespace, the way tooling knows them from a manifest."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from access.current import scope_of
from access.scope import Scope
from core.web import CLUSTER_TOKEN, namespace_from_token
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Kind, Resource
from inventory.selectors import cluster_choose, resource_list

KIND_HELP = "Kind, when the name alone is ambiguous."
NAMESPACE_HELP = f"Namespace of the object; `{CLUSTER_TOKEN}` for a cluster-scoped kind."


def _fields(role: str, kinds: tuple[str, ...]) -> dict[str, serializers.Field]:
    return {
        role: serializers.IntegerField(required=False, help_text=f"{role.capitalize()} resource id; or give its name."),
        f"{role}_kind": serializers.ChoiceField(
            choices=[(k, Kind(k).label) for k in kinds], required=False, help_text=KIND_HELP
        ),
        f"{role}_namespace": serializers.CharField(required=False, help_text=NAMESPACE_HELP),
        f"{role}_name": serializers.CharField(required=False, help_text=f"{role.capitalize()} name (with `cluster`)."),
    }


def resolve(data: dict[str, Any], role: str, kinds: tuple[str, ...], scope: Scope) -> Resource:
    """The one object the id, or the name (with kind and namespace where needed), names, among
    those `scope` reads."""
    objects = resource_list(kinds, scope=scope)
    if data.get(role) is not None:
        by_id = objects.filter(pk=data[role]).first()
        if by_id is None:
            raise serializers.ValidationError({role: [f"no {role} with id {data[role]}"]})
        return by_id
    name = data.get(f"{role}_name")
    if not name:
        raise serializers.ValidationError(
            {role: [f"give the {role}'s id, or {role}_name (with {role}_kind and {role}_namespace where needed)"]}
        )
    cluster = cluster_choose(data.get("cluster"), default="only", scope=scope)
    objects = objects.filter(cluster=cluster, name=name)
    if data.get(f"{role}_kind"):
        objects = objects.filter(kind=data[f"{role}_kind"])
    if data.get(f"{role}_namespace"):
        objects = objects.filter(namespace=namespace_from_token(data[f"{role}_namespace"]))
    found = list(objects[:11])
    if not found:
        raise serializers.ValidationError(
            {f"{role}_name": [f"no {role} named {name!r} in cluster {cluster.name!r} with that kind and namespace"]}
        )
    if len(found) > 1:
        named = ", ".join(f"{o.kind} in {o.namespace or CLUSTER_TOKEN}" for o in found[:10])
        raise serializers.ValidationError(
            {f"{role}_name": [f"{name!r} names several {role}s ({named}): give {role}_kind and {role}_namespace"]}
        )
    return found[0]


class _Query(serializers.Serializer):
    """Bound with `context={"request": request}`: ids and names resolve among the reader's objects."""

    cluster = serializers.CharField(required=False, help_text="Cluster name, with names; defaults to the only cluster.")

    @property
    def scope(self) -> Scope:
        return scope_of(self.context["request"])


class SelectionQuerySerializer(_Query):
    namespace = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text=f"Namespace to select in; `{CLUSTER_TOKEN}` for cluster scope. Default: the model's own.",
    )

    def get_fields(self) -> dict[str, serializers.Field]:
        return {**super().get_fields(), **_fields("model", MODEL_KINDS)}

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {**attrs, "model": resolve(attrs, "model", MODEL_KINDS, self.scope)}


class CellQuerySerializer(SelectionQuerySerializer):
    def get_fields(self) -> dict[str, serializers.Field]:
        fields = {**super().get_fields(), **_fields("runtime", RUNTIME_KINDS)}
        fields[
            "namespace"
        ].help_text = f"Namespace of the selection; `{CLUSTER_TOKEN}` for cluster scope. Default: the model's, else the runtime's."
        return fields

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        model = resolve(attrs, "model", MODEL_KINDS, self.scope)
        runtime = resolve(attrs, "runtime", RUNTIME_KINDS, self.scope)
        if model.cluster_id != runtime.cluster_id:
            raise serializers.ValidationError({"runtime": ["The runtime belongs to another cluster than the model."]})
        return {**attrs, "model": model, "runtime": runtime}
