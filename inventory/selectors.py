"""Reading the inventory: the cluster a request means, and the querysets the API and the pages list."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from django.db.models import Count, F, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Now
from django.http import Http404
from django.shortcuts import get_object_or_404

from access.restrict import Action
from access.scope import Scope
from core.errors import DomainError

from .models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Resource, SyncState

ClusterDefault = Literal["only", "first", "none"]


class ClusterChoiceError(DomainError, ValueError):
    """No cluster where one is needed, several where none is named, or a name that matches none
    (400 on field "cluster"; pages answer 404)."""

    code = "cluster"

    def __init__(self, message: str) -> None:
        super().__init__(message, field="cluster")


class ClusterNotFound(ClusterChoiceError):
    """A required cluster reference (`default="none"`: the target of a request, such as a patch)
    that matches no cluster: missing, as an unknown model is (404)."""

    code = "not_found"
    http_status = 404


def clusters_visible(scope: Scope) -> QuerySet[Cluster]:
    """The clusters the scope reads any part of; the base of every cluster lookup (the choosers
    of every page among them), so a cluster the user may not read is one that does not exist."""
    return Cluster.objects.restrict(scope, Action.VIEW)


def resources_visible(scope: Scope) -> QuerySet[Resource]:
    """The objects the scope reads: its namespaces' and, in a cluster it reads, the cluster-scoped."""
    return Resource.objects.restrict(scope, Action.VIEW)


def cluster_choose(value: str | int | None, *, default: ClusterDefault, scope: Scope) -> Cluster:
    """The one rule for the cluster a request or command means: the cluster `value` names (by
    name, or else by numeric id). When none is named, `default` decides: "only" the only
    registered cluster, "first" the first by name, "none" an error (a name is required).
    Only clusters the scope reads count. Raises ClusterChoiceError."""
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    if text:
        return _cluster_named(text, ClusterNotFound if default == "none" else ClusterChoiceError, scope)
    if default == "none":
        raise ClusterChoiceError("name the cluster (its name or id)")
    clusters = list(clusters_visible(scope)[:2])  # ordered by name
    if not clusters:
        raise ClusterChoiceError("no cluster is registered; add one with `manage.py add_cluster`")
    if default == "only" and len(clusters) > 1:
        raise ClusterChoiceError("several clusters are registered; name one with --cluster")
    return clusters[0]


def _cluster_named(text: str, missing: type[ClusterChoiceError], scope: Scope) -> Cluster:
    cluster = clusters_visible(scope).filter(name=text).first()
    if cluster is None and text.isdecimal():
        cluster = clusters_visible(scope).filter(pk=int(text)).first()
    if cluster is None:
        raise missing(f"no cluster named {text!r}")
    return cluster


def cluster_or_404(name: str | None, *, scope: Scope) -> Cluster:
    """The cluster a page shows: the named one, or the first by name; 404 when there is none."""
    try:
        return cluster_choose(name, default="first", scope=scope)
    except ClusterChoiceError as error:
        raise Http404(error.message) from None


def cluster_list(scope: Scope) -> QuerySet[Cluster]:
    """Every cluster the scope reads, with its sync state per kind."""
    return clusters_visible(scope).prefetch_related(
        Prefetch("sync_states", queryset=sync_state_list(scope).order_by("kind"), to_attr="sync_by_kind")
    )


def sync_state_list(scope: Scope) -> QuerySet[SyncState]:
    """The sync states of the clusters the scope reads. `visible_count` and `visible_invalid`
    are the kind's counts as the scope sees them: all objects where it reads the whole
    cluster, else only those of its namespaces and the cluster-scoped ones; `database_now`
    judges the leases (SyncState.watch_live)."""
    seen = Resource.objects.restrict(scope, Action.VIEW).filter(cluster=OuterRef("cluster"), kind=OuterRef("kind"))
    counted = seen.order_by().values("cluster").annotate(n=Count("pk")).values("n")
    invalid = seen.exclude(error="").order_by().values("cluster").annotate(n=Count("pk")).values("n")
    states = SyncState.objects.restrict(scope, Action.VIEW).select_related("cluster").annotate(database_now=Now())
    if scope.q("cluster__name") == Q():
        return states.annotate(visible_count=F("count"), visible_invalid=F("invalid"))
    return states.annotate(
        visible_count=Coalesce(Subquery(counted), 0),
        visible_invalid=Coalesce(Subquery(invalid), 0),
    )


def model_or_404(pk: int, *, scope: Scope) -> Resource:
    return get_object_or_404(resources_visible(scope).select_related("cluster"), pk=pk, kind__in=MODEL_KINDS)


def runtime_or_404(pk: int, *, scope: Scope) -> Resource:
    return get_object_or_404(resources_visible(scope).select_related("cluster"), pk=pk, kind__in=RUNTIME_KINDS)


def resource_list(kinds: Iterable[str], *, scope: Scope) -> QuerySet[Resource]:
    """Objects of the given kinds the scope reads, without their (large) bodies."""
    return resources_visible(scope).filter(kind__in=list(kinds)).select_related("cluster").defer("obj")


def _leaf_paths(tree: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The field paths a managedFields `fieldsV1` tree owns: `{"f:a": {"f:b": {}}}` -> [("a", "b")].
    Only plain fields (`f:`) are followed; list items (`k:`, `v:`, `i:`) count as their list."""
    if not isinstance(tree, dict) or not tree:
        return [prefix] if prefix else []
    found: list[tuple[str, ...]] = []
    for key, value in tree.items():
        if key == ".":
            found.append(prefix)
        elif isinstance(key, str) and key.startswith("f:"):
            found += _leaf_paths(value, (*prefix, key[2:]))
        elif prefix:
            found.append(prefix)
    return found


def field_managers(obj: Mapping[str, Any], path: Sequence[str]) -> dict[str, list[str]] | None:
    """Who set each field under `path` (e.g. ("spec", "diffusionPipeline")), from the object's
    `metadata.managedFields`: dotted sub-path ("" for the object at `path` itself) -> the managers
    ("name (operation)"). None when the object carries no managedFields, so it cannot be told (a
    manifest folder, or an API server response with them stripped)."""
    metadata = obj.get("metadata")
    entries = metadata.get("managedFields") if isinstance(metadata, Mapping) else None
    if not isinstance(entries, list) or not entries:
        return None
    owners: dict[str, list[str]] = {}
    wanted = tuple(path)
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        who = f"{entry.get('manager') or 'unknown manager'} ({entry.get('operation') or 'unknown operation'})"
        for owned in _leaf_paths(entry.get("fieldsV1")):
            if owned[: len(wanted)] != wanted:
                continue
            names = owners.setdefault(".".join(owned[len(wanted) :]), [])
            if who not in names:
                names.append(who)
    return owners
