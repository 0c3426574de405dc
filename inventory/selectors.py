"""Reading the inventory: the querysets the API and the pages list."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Prefetch, QuerySet
from django.http import Http404
from django.shortcuts import get_object_or_404

from .models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Resource, SyncState


def cluster_list() -> QuerySet[Cluster]:
    """Every cluster with its sync state per kind."""
    return Cluster.objects.prefetch_related(
        Prefetch("sync_states", queryset=SyncState.objects.order_by("kind"), to_attr="sync_by_kind")
    )


def sync_state_list() -> QuerySet[SyncState]:
    return SyncState.objects.select_related("cluster")


def cluster_for_page(name: str | None) -> Cluster:
    """The cluster a page shows: the named one, or the first by name (404 when there is none)."""
    if name:
        return get_object_or_404(Cluster, name=name)
    cluster = Cluster.objects.order_by("name").first()
    if cluster is None:
        raise Http404("no cluster is registered")
    return cluster


def model_or_404(pk: int) -> Resource:
    return get_object_or_404(Resource.objects.select_related("cluster"), pk=pk, kind__in=MODEL_KINDS)


def runtime_or_404(pk: int) -> Resource:
    return get_object_or_404(Resource.objects.select_related("cluster"), pk=pk, kind__in=RUNTIME_KINDS)


def resource_list(kinds: Iterable[str]) -> QuerySet[Resource]:
    """Objects of the given kinds, all clusters, without their (large) bodies."""
    return Resource.objects.filter(kind__in=list(kinds)).select_related("cluster").defer("obj")


# --- Read by the HTML pages: who set which field of an object (metadata.managedFields). ---

from collections.abc import Mapping, Sequence  # noqa: E402
from typing import Any  # noqa: E402


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
