"""The what-if of manifest trees on registered clusters, for CI (`manage.py whatif`, and the
`whatif/check` endpoint): the cluster's stored inventory, the same with the manifests applied
as `kubectl apply` would (and, with `prune`, the objects the manifests lack deleted), and
`matching.diff` between the two, reported as `python -m matching diff` reports.

Unlike the what-if page, the manifests may hold InferenceServices (their verdicts are part
of the check), and documents of other kinds are skipped, as a git tree holds them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings

import matching
from inventory.models import Cluster, Kind
from inventory.parsed import Inventory
from inventory.selectors import resources_visible
from matching import Diff, ObjectKey, Objects

from .errors import WhatIfError
from .overlay import replaced_inventory
from .parse import read_documents
from .services import keep_creation_time, readable_inventory, refuse_unreadable

Item = tuple[Mapping[str, Any], matching.Model | matching.Runtime | matching.InferenceService]
"""(object as applied, parsed value) of one manifest."""


def items_from_text(source: Any) -> list[Item]:
    """The OME objects of manifest text or JSON objects (as the what-if API reads them: size
    limits, no YAML aliases); other kinds are skipped. Raises WhatIfError naming the document
    and field."""
    found: list[Item] = []
    for number, value in read_documents(source):
        if not isinstance(value, Mapping):
            raise WhatIfError(f"expected a mapping, got {type(value).__name__}", document=number)
        if not matching.is_ome_object(value):
            continue
        if len(found) >= settings.OME_WHATIF_MAX_DOCUMENTS:
            raise WhatIfError(f"more than {settings.OME_WHATIF_MAX_DOCUMENTS} objects in one check", document=number)
        obj = matching.as_applied(value)
        try:
            found.append((obj, matching.parse_object(obj)))
        except matching.ManifestError as error:
            raise WhatIfError(error.problem, document=number, obj=error.obj, field=error.field) from None
        except RecursionError:
            raise WhatIfError("the object is nested too deeply", document=number) from None
    return found


def items_from_paths(paths: Iterable[str]) -> list[Item]:
    """The OME objects of files and folders (`matching.read_tree`'s rules). Raises
    matching.TreeError naming every bad file, document and field."""
    return [(obj, value) for _origin, obj, value in matching.read_objects(paths)]


def _pinned(cluster: Cluster) -> set[ObjectKey]:
    isvcs = resources_visible().filter(cluster=cluster, kind=Kind.INFERENCE_SERVICE)
    rows = isvcs.values_list("namespace", "name", "obj")
    return {(Kind.INFERENCE_SERVICE.value, ns, name) for ns, name, obj in rows if matching.isvc_pinned(obj or {})}


def _objects(inventory: Inventory, pinned: Iterable[ObjectKey]) -> Objects:
    return Objects(
        models=inventory.models,
        runtimes=inventory.runtimes,
        isvcs=inventory.isvcs,
        invalid=inventory.invalid,
        pinned=frozenset(pinned),
        behaviour=inventory.behaviour,
    )


def check_cluster(cluster: Cluster, items: Sequence[Item], *, prune: bool = False) -> Diff:
    """What OME would decide differently on `cluster` with `items` applied (later items win);
    `prune`: objects of the five kinds that the items lack are deleted too. A reader of some
    namespaces checks against those (and the cluster-scoped objects), with items of theirs only.
    Both sides are judged by the cluster's own OME profile, as its matrix is."""
    return matching.diff(*check_views(cluster, items, prune=prune))


def check_views(cluster: Cluster, items: Sequence[Item], *, prune: bool = False) -> tuple[Objects, Objects]:
    """(the cluster's objects as the reader sees them, the same with `items` applied), as
    `check_cluster` compares them."""
    refuse_unreadable(cluster, [value.key for _obj, value in items])
    inventory = readable_inventory(cluster)
    base_pinned = _pinned(cluster)
    changes: dict[ObjectKey, Any] = {}
    pinned = set(base_pinned)
    for obj, value in items:
        previous = inventory.models.get(value.key) or inventory.runtimes.get(value.key)
        changes[value.key] = (
            keep_creation_time(value, previous) if not isinstance(value, matching.InferenceService) else value
        )
        pinned.discard(value.key)
        if isinstance(value, matching.InferenceService) and matching.isvc_pinned(obj):
            pinned.add(value.key)
    deletions = []
    if prune:
        held = set(inventory.models) | set(inventory.runtimes) | set(inventory.isvcs) | set(inventory.invalid)
        deletions = sorted(held - set(changes))
    head = replaced_inventory(inventory, changes, deletions)
    return _objects(inventory, base_pinned), _objects(head, pinned - set(deletions))


def check_clusters(
    clusters: Iterable[Cluster], items: Sequence[Item], *, prune: bool = False
) -> list[matching.Section]:
    """One report section per cluster, by name. No objects (without `prune`, where no objects
    means deleting everything) raise WhatIfError: a check of nothing would pass silently."""
    if not items and not prune:
        raise WhatIfError(
            "no BaseModel, ClusterBaseModel, ServingRuntime, ClusterServingRuntime or InferenceService to check"
        )
    return [(f"cluster {cluster.name}", check_cluster(cluster, items, prune=prune)) for cluster in clusters]
