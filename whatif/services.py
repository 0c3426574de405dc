"""What-if: which matrix cells would change if some models or runtimes were changed, added or
deleted, computed before anything is applied.

The input is read by `whatif.parse`, put over the cluster's cached inventory by
`whatif.overlay`, and only the rows the change can touch are compared by `whatif.diff`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

import matching
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Resource
from inventory.parsed import Inventory, load_inventory
from matching import ObjectKey, Runtime, key_text

from .diff import diff_row
from .errors import WhatIfError
from .overlay import affected_models, replaced_inventory
from .parse import Parsed, parse_documents, parse_key
from .results import MAX_ERROR_TEXTS, ObjectChange, RowDiff, WhatIfResult

__all__ = ["keep_creation_time", "whatif", "whatif_inventory", "whatif_model_patch"]


def keep_creation_time(value: Parsed, previous: Parsed | None) -> Parsed:
    """`kubectl apply` keeps creationTimestamp; a manifest usually has none."""
    if isinstance(value, Runtime) and isinstance(previous, Runtime) and not value.created:
        return dataclasses.replace(value, created=previous.created)
    return value


def _read_input(
    inventory: Inventory, documents: Any, deletions: Iterable[Any]
) -> tuple[dict[ObjectKey, Parsed], list[ObjectKey]]:
    """The changed objects by key, and the deleted keys, checked against the inventory."""
    parsed = parse_documents(documents) if documents not in ((), None, []) else []
    deleted = [parse_key(item) for item in deletions]
    changes: dict[ObjectKey, Parsed] = {value.key: value for _obj, value in parsed}
    for key in deleted:
        if key in changes:
            raise WhatIfError(f"{key_text(key)} is both changed and deleted", field="deletions")
        if key not in inventory.models and key not in inventory.runtimes and key not in inventory.invalid:
            raise WhatIfError(f"{key_text(key)} is not in the cluster", field="deletions")
    if not changes and not deleted:
        raise WhatIfError("nothing to evaluate: give at least one manifest or deletion")
    return changes, deleted


def _object_changes(
    inventory: Inventory, changes: dict[ObjectKey, Parsed], deleted: list[ObjectKey]
) -> list[ObjectChange]:
    """What happens to each object, sorted by key; `changes` get the creation times kept."""
    objects: list[ObjectChange] = []
    for key, value in list(changes.items()):
        previous = inventory.models.get(key) or inventory.runtimes.get(key)
        value = changes[key] = keep_creation_time(value, previous)
        if previous is None:
            action = "changed" if key in inventory.invalid else "added"
        else:
            action = "unchanged" if previous == value else "changed"
        objects.append(ObjectChange(key, action))
    objects += [ObjectChange(key, "removed") for key in deleted]
    return sorted(objects, key=lambda change: change.key)


def _row_diffs(
    old: Inventory, new: Inventory, models: list[ObjectKey], changed_runtimes: list[ObjectKey]
) -> tuple[list[RowDiff], int]:
    """The rows of `models` that change, and how many rows were compared."""
    rows: list[RowDiff] = []
    evaluated = explained = 0
    for model_key in models:
        namespaces: set[str] = set()
        for view in (old, new):
            if model_key in view.models or model_key in view.invalid:
                namespaces.update(view.namespaces_for(model_key))
        for namespace in sorted(namespaces):
            evaluated += 1
            scoped = [key for key in changed_runtimes if key[0] == "ClusterServingRuntime" or key[1] == namespace]
            diff = diff_row(old, new, model_key, namespace, scoped, with_errors=explained < MAX_ERROR_TEXTS)
            if diff is not None:
                rows.append(diff)
                if diff.old_outcome != diff.new_outcome:
                    explained += 1
    return rows, evaluated


def whatif_inventory(
    inventory: Inventory,
    documents: Any = (),
    *,
    deletions: Iterable[Any] = (),
    cluster_name: str = "",
) -> WhatIfResult:
    """The what-if over an Inventory (see `whatif`); `inventory` is not modified."""
    changes, deleted = _read_input(inventory, documents, deletions)
    objects = _object_changes(inventory, changes, deleted)
    new = replaced_inventory(inventory, changes, deleted)
    changed_keys = [change.key for change in objects if change.action != "unchanged"]
    models = affected_models(inventory, new, changed_keys)
    changed_runtimes = [key for key in changed_keys if key[0] in RUNTIME_KINDS]
    rows, evaluated = _row_diffs(inventory, new, models, changed_runtimes)
    return WhatIfResult(
        cluster=cluster_name, objects=objects, rows=rows, models_evaluated=len(models), rows_evaluated=evaluated
    )


def whatif(cluster: Cluster, documents: Any = (), *, deletions: Iterable[Any] = ()) -> WhatIfResult:
    """Which matrix rows and cells would change if `documents` were applied to the cluster and
    `deletions` deleted, before anything is applied.

    `documents`: manifest text (YAML or JSON; several documents, `*List` kinds and top-level
    lists allowed; at most OME_WHATIF_MAX_BYTES, default 1 MiB), a mapping, or a list of
    mappings/texts: BaseModels, ClusterBaseModels, ServingRuntimes and ClusterServingRuntimes
    only. `deletions`: keys (see `parse_key`) of objects of the cluster. Raises WhatIfError.
    """
    return whatif_inventory(load_inventory(cluster), documents, deletions=deletions, cluster_name=cluster.name)


def whatif_model_patch(cluster: Cluster, model_key: Any, merge_patch: Mapping[str, Any]) -> WhatIfResult:
    """The what-if of a JSON merge patch (RFC 7386, `kubectl patch --type merge`) of one model,
    for example `matching.pipeline_patch(...).patch`: `{"spec": {"diffusionPipeline": {...}}}`."""
    key = parse_key(model_key)
    if key[0] not in MODEL_KINDS:
        raise WhatIfError(f"{key_text(key)} is not a model", field="model")
    if not isinstance(merge_patch, Mapping):
        raise WhatIfError(f"the patch must be a JSON object, got {type(merge_patch).__name__}", field="patch")
    resource = Resource.objects.filter(cluster=cluster, kind=key[0], namespace=key[1], name=key[2]).first()
    if resource is None:
        raise WhatIfError(f"{key_text(key)} is not in the cluster", field="model")
    try:
        patched = matching.merge_patch(resource.obj, merge_patch)
    except RecursionError:
        raise WhatIfError("the patch is nested too deeply", field="patch") from None
    if not isinstance(patched, Mapping) or (
        patched.get("kind"),
        _metadata(patched, "namespace"),
        _metadata(patched, "name"),
    ) != (key[0], key[1] or None, key[2]):
        raise WhatIfError("the patch must not change kind, metadata.name or metadata.namespace", field="patch")
    return whatif(cluster, [patched])


def _metadata(obj: Mapping[str, Any], field_name: str) -> Any:
    metadata = obj.get("metadata")
    value = metadata.get(field_name) if isinstance(metadata, Mapping) else None
    return value or None
