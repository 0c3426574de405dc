"""The what-if of manifest trees on registered clusters, for CI (`manage.py whatif`, and the
`whatif/check` endpoint): the cluster's stored inventory, the same with the manifests applied
as `kubectl apply` would (and, with `prune`, the objects the manifests lack deleted), and
`matching.diff` between the two, reported as `python -m matching diff` reports.

Unlike the what-if page, the manifests may hold InferenceServices (their verdicts are part
of the check), and documents of other kinds are skipped, as a git tree holds them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from django.conf import settings

import matching
from access.scope import Scope
from inventory.models import Cluster, Kind
from inventory.parsed import Inventory, inventory_for
from inventory.selectors import resources_visible
from matching import Diff, ObjectKey, Objects

from .errors import WhatIfError
from .overlay import replaced_inventory
from .parse import checked, read_documents, refuse
from .services import keep_creation_time, refuse_inadmissible, refuse_unreadable

Item = tuple[Mapping[str, Any], matching.Model | matching.Runtime | matching.InferenceService]
"""(object as applied, parsed value) of one manifest."""


def items_from_text(source: Any, *, lenient: bool = False) -> tuple[list[Item], list[matching.Problem]]:
    """The OME objects of manifest text or JSON objects (as the what-if API reads them: size
    limits, no YAML aliases), other kinds skipped, and the schema warnings. Each object is
    checked against OME's CRD schema (`lenient`: errors become warnings). Raises WhatIfError
    naming the document, line and field, with every problem."""
    found: list[Item] = []
    problems: list[matching.Problem] = []
    for document in read_documents(source):
        number, value = document.number, document.value
        if not isinstance(value, Mapping):
            raise WhatIfError(f"expected a mapping, got {type(value).__name__}", document=number)
        if not matching.is_ome_object(value):
            continue
        if len(found) >= settings.OME_WHATIF_MAX_DOCUMENTS:
            raise WhatIfError(f"more than {settings.OME_WHATIF_MAX_DOCUMENTS} objects in one check", document=number)
        problems += checked(document, lenient=lenient)
        obj = matching.as_applied(value)
        try:
            found.append((obj, matching.parse_object(obj)))
        except matching.ManifestError as error:
            raise WhatIfError(error.problem, document=number, obj=error.obj, field=error.field) from None
        except RecursionError:
            raise WhatIfError("the object is nested too deeply", document=number) from None
    refuse(problems)
    return found, problems


def items_from_paths(
    paths: Iterable[str], *, lenient: bool = False
) -> tuple[list[Item], dict[ObjectKey, matching.Origin], list[matching.Problem]]:
    """The OME objects of files and folders, the place each was read from (for findings at the
    manifest line), and the schema warnings (`matching.read_checked`'s rules). Raises
    matching.TreeError naming every bad file, document, line and field."""
    found, warnings = matching.read_checked(paths, lenient=lenient)
    items: list[Item] = [(obj, value) for _origin, obj, value in found]
    return items, {value.key: origin for origin, _obj, value in found}, warnings


def _pinned(cluster: Cluster, scope: Scope) -> set[ObjectKey]:
    isvcs = resources_visible(scope).filter(cluster=cluster, kind=Kind.INFERENCE_SERVICE)
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


def check_cluster(
    cluster: Cluster,
    items: Sequence[Item],
    *,
    prune: bool = False,
    scope: Scope,
    origins: Mapping[ObjectKey, matching.Origin] | None = None,
) -> Diff:
    """What OME would decide differently on `cluster` with `items` applied (later items win);
    `prune`: objects of the five kinds that the items lack are deleted too; `origins`: where
    the items were read from, so that findings point at their manifest lines. A reader of some
    namespaces checks against those (and the cluster-scoped objects), with items of theirs only.
    Both sides are judged by the cluster's own OME profile, as its matrix is."""
    base, head = check_views(cluster, items, prune=prune, scope=scope)
    return matching.diff(base, replace(head, origins=origins or {}))


def check_views(
    cluster: Cluster, items: Sequence[Item], *, prune: bool = False, scope: Scope
) -> tuple[Objects, Objects]:
    """(the cluster's objects as the reader sees them, the same with `items` applied), as
    `check_cluster` compares them."""
    refuse_unreadable(cluster, [value.key for _obj, value in items], scope=scope)
    inventory = inventory_for(cluster, scope=scope)
    base_pinned = _pinned(cluster, scope)
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
    refuse_inadmissible(inventory, head)
    return _objects(inventory, base_pinned), _objects(head, pinned - set(deletions))


def check_clusters(
    clusters: Iterable[Cluster],
    items: Sequence[Item],
    *,
    prune: bool = False,
    scope: Scope,
    origins: Mapping[ObjectKey, matching.Origin] | None = None,
) -> list[matching.Section]:
    """One report section per cluster, by name. No objects (without `prune`, where no objects
    means deleting everything) raise WhatIfError: a check of nothing would pass silently."""
    if not items and not prune:
        raise WhatIfError(
            "no BaseModel, ClusterBaseModel, ServingRuntime, ClusterServingRuntime or InferenceService to check"
        )
    return [
        (f"cluster {cluster.name}", check_cluster(cluster, items, prune=prune, scope=scope, origins=origins))
        for cluster in clusters
    ]
