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
from access.scope import Scope
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster
from inventory.parsed import Inventory, inventory_for
from inventory.selectors import resources_visible
from matching import ObjectKey, Runtime, key_text

from .diff import Rows, diff_row
from .errors import WhatIfError
from .overlay import affected_models, replaced_inventory
from .parse import Parsed, Stored, parse_key, read_manifests
from .results import MAX_ERROR_TEXTS, ObjectChange, RowDiff, ValueWarning, WhatIfResult

__all__ = [
    "keep_creation_time",
    "refuse_inadmissible",
    "refuse_unreadable",
    "stored_in",
    "whatif",
    "whatif_inventory",
    "whatif_model_patch",
]


def keep_creation_time(value: Parsed, previous: Parsed | None) -> Parsed:
    """`kubectl apply` keeps creationTimestamp; a manifest usually has none."""
    if isinstance(value, Runtime) and isinstance(previous, Runtime) and not value.created:
        return dataclasses.replace(value, created=previous.created)
    return value


def _read_input(
    inventory: Inventory, documents: Any, deletions: Iterable[Any], stored: Stored | None, lenient: bool
) -> tuple[dict[ObjectKey, Parsed], list[ObjectKey], list[ValueWarning]]:
    """The changed objects by key, the deleted keys (checked against the inventory), and the
    warnings: schema problems that do not refuse the input, and values OME accepts but cannot
    match."""
    parsed = read_manifests(documents, stored, lenient=lenient) if documents not in ((), None, []) else []
    warnings = [
        ValueWarning(read.value.key, problem.path, problem.message, problem.line, problem.hint)
        for read in parsed
        for problem in read.warnings
    ]
    warnings += [
        ValueWarning(read.value.key, path, problem)
        for read in parsed
        for path, problem in matching.unmatchable_values(read.obj)
    ]
    deleted = [parse_key(item) for item in deletions]
    changes: dict[ObjectKey, Parsed] = {read.value.key: read.value for read in parsed}
    for key in deleted:
        if key in changes:
            raise WhatIfError(f"{key_text(key)} is both changed and deleted", field="deletions")
        if key not in inventory.models and key not in inventory.runtimes and key not in inventory.invalid:
            raise WhatIfError(f"{key_text(key)} is not in the cluster", field="deletions")
    if not changes and not deleted:
        raise WhatIfError("nothing to evaluate: give at least one manifest or deletion")
    return changes, deleted, warnings


def refuse_inadmissible(old: Inventory, new: Inventory) -> None:
    """WhatIfError, as the API server would answer, for the first runtime new or changed in `new`
    that OME's runtime webhook refuses where `new`'s runtimes stand (matching.admit_runtime,
    under the cluster's OME)."""
    runtimes = list(new.runtimes.values())
    for key, runtime in sorted(new.runtimes.items()):
        if old.runtimes.get(key) == runtime:
            continue
        admission = matching.admit_runtime(runtime, runtimes, behaviour=new.behaviour)
        if admission.denial is not None:
            raise WhatIfError(admission.denial, obj=key_text(key), field=admission.refusals[0].field)


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


def _standing(view: Inventory, model_key: ObjectKey, runtime_key: ObjectKey) -> tuple[object, ...] | None:
    """Everything about a runtime that places it in a model's rows: its first passing entry,
    score, auto-select, disabled flag and the fields OME's ranking reads."""
    runtime = view.runtimes.get(runtime_key)
    if runtime is None:
        return None
    entry = view.grid.compatible_entries(model_key).get(runtime_key)
    points = matching.score(view.models[model_key], runtime)
    return (entry, points, runtime.has_auto_select, runtime.is_disabled, runtime.size_range, runtime.created)


def _rows_alike(
    old: Inventory,
    new: Inventory,
    model_key: ObjectKey,
    changed_runtimes: list[ObjectKey],
    standing_alike: dict[tuple[object, ...], bool],
) -> bool:
    """Whether the changes cannot touch any row of the model: the model is the same in both
    views, in the same namespaces, and every changed runtime stands the same in its rows. Such
    rows are not compared cell by cell (most of a runtime change's candidates are these).
    A runtime's standing depends on the model's signature only (as the grid's verdicts and
    scores do), so `standing_alike` holds the answer per signature for one what-if."""
    model = old.models.get(model_key)
    if model is None or model != new.models.get(model_key):
        return False
    if old.namespaces_for(model_key) != new.namespaces_for(model_key):
        return False
    signature = model.signature
    alike = standing_alike.get(signature)
    if alike is None:
        alike = standing_alike[signature] = all(
            _standing(old, model_key, key) == _standing(new, model_key, key) for key in changed_runtimes
        )
    return alike


def _row_diffs(
    old: Inventory,
    new: Inventory,
    models: list[ObjectKey],
    changed_runtimes: list[ObjectKey],
    *,
    explain: bool,
    old_rows: Rows | None,
) -> tuple[list[RowDiff], dict[ObjectKey, tuple[str, ...]]]:
    """The rows of `models` that change, and the namespaces each model was compared in; OME's
    error texts for the first MAX_ERROR_TEXTS rows whose outcome changes when `explain` is set."""
    rows: list[RowDiff] = []
    compared: dict[ObjectKey, tuple[str, ...]] = {}
    explained = 0 if explain else MAX_ERROR_TEXTS
    standing_alike: dict[tuple[object, ...], bool] = {}
    rows_of_views: tuple[Rows, Rows] = ({} if old_rows is None else old_rows, {})
    for model_key in models:
        namespaces: set[str] = set()
        for view in (old, new):
            if model_key in view.models or model_key in view.invalid:
                namespaces.update(view.namespaces_for(model_key))
        compared[model_key] = tuple(sorted(namespaces))
        if _rows_alike(old, new, model_key, changed_runtimes, standing_alike):
            continue
        for namespace in compared[model_key]:
            scoped = [key for key in changed_runtimes if key[0] == "ClusterServingRuntime" or key[1] == namespace]
            with_errors = explained < MAX_ERROR_TEXTS
            diff = diff_row(old, new, model_key, namespace, scoped, with_errors=with_errors, rows=rows_of_views)
            if diff is not None:
                rows.append(diff)
                if diff.old_outcome != diff.new_outcome:
                    explained += 1
    return rows, compared


def whatif_inventory(
    inventory: Inventory,
    documents: Any = (),
    *,
    deletions: Iterable[Any] = (),
    cluster_name: str = "",
    stored: Stored | None = None,
    explain: bool = True,
    lenient: bool = False,
    whole: bool = True,
    old_rows: Rows | None = None,
    admit: bool = False,
) -> WhatIfResult:
    """The what-if over an Inventory (see `whatif`); `inventory` is not modified. `stored`
    looks up the cluster's version of an object (see whatif.parse); `explain=False` leaves
    out OME's error texts (which list every runtime in scope with its reason); `lenient`
    demotes schema errors to warnings; `whole=False`: the inventory is the part of the cluster
    a reader reads, so the result names no namespaces as all that were compared. `old_rows`
    keeps the rows of `inventory` computed here for the next what-if over the same inventory.
    `admit`: a runtime OME's runtime webhook would refuse raises WhatIfError (refuse_inadmissible)."""
    changes, deleted, warnings = _read_input(inventory, documents, deletions, stored, lenient)
    objects = _object_changes(inventory, changes, deleted)
    new = replaced_inventory(inventory, changes, deleted)
    if admit:
        refuse_inadmissible(inventory, new)
    changed_keys = [change.key for change in objects if change.action != "unchanged"]
    models = affected_models(inventory, new, changed_keys)
    changed_runtimes = [key for key in changed_keys if key[0] in RUNTIME_KINDS]
    rows, compared = _row_diffs(inventory, new, models, changed_runtimes, explain=explain, old_rows=old_rows)
    return WhatIfResult(
        cluster=cluster_name,
        objects=objects,
        rows=rows,
        models_evaluated=len(models),
        rows_evaluated=sum(len(namespaces) for namespaces in compared.values()),
        warnings=warnings,
        compared=compared if whole else {},
    )


def whatif(
    cluster: Cluster, documents: Any = (), *, deletions: Iterable[Any] = (), lenient: bool = False, scope: Scope
) -> WhatIfResult:
    """Which matrix rows and cells would change if `documents` were applied to the cluster and
    `deletions` deleted, before anything is applied. A reader of some namespaces only sees (and
    may change) those and the cluster-scoped objects: the rest of the cluster is left out.

    `documents`: manifest text (YAML or JSON; several documents, `*List` kinds and top-level
    lists allowed; at most OME_WHATIF_MAX_BYTES, default 1 MiB), a mapping, or a list of
    mappings/texts: BaseModels, ClusterBaseModels, ServingRuntimes and ClusterServingRuntimes
    only. `deletions`: keys (see `parse_key`) of objects of the cluster. `lenient`: schema
    errors (fields of another OME version) become warnings. A runtime OME's own runtime webhook
    would refuse is refused the same way (WhatIfError naming the object and field). Raises
    WhatIfError.
    """
    result = whatif_inventory(
        inventory_for(cluster, scope=scope),
        documents,
        deletions=deletions,
        cluster_name=cluster.name,
        stored=stored_in(cluster, scope=scope),
        lenient=lenient,
        whole=scope.reads_whole(cluster.name),
        admit=True,
    )
    refuse_unreadable(cluster, [change.key for change in result.objects], scope=scope)
    return result


def refuse_unreadable(cluster: Cluster, keys: Iterable[ObjectKey], *, scope: Scope) -> None:
    """WhatIfError for the first key of a namespace the scope may not read."""
    for key in keys:
        if not scope.reads(cluster.name, key[1]):
            raise WhatIfError(
                f"{key_text(key)}: namespace {key[1]} of cluster {cluster.name} is not readable to you",
                field="manifests",
            )


def stored_in(cluster: Cluster, *, scope: Scope) -> Stored:
    """The lookup of an object's stored version in the cluster, by its kind, namespace and name,
    among those the scope reads."""

    def stored(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
        metadata = obj.get("metadata")
        if not isinstance(metadata, Mapping):
            return None
        found = (
            resources_visible(scope)
            .filter(
                cluster=cluster,
                kind=obj.get("kind"),
                namespace=metadata.get("namespace") or "",
                name=metadata.get("name"),
            )
            .values_list("obj", flat=True)
        )
        return next(iter(found), None)

    return stored


def whatif_model_patch(
    cluster: Cluster, model_key: Any, merge_patch: Mapping[str, Any], *, scope: Scope
) -> WhatIfResult:
    """The what-if of a JSON merge patch (RFC 7386, `kubectl patch --type merge`) of one model,
    for example `matching.pipeline_patch(...).patch`: `{"spec": {"diffusionPipeline": {...}}}`."""
    key = parse_key(model_key)
    if key[0] not in MODEL_KINDS:
        raise WhatIfError(f"{key_text(key)} is not a model", field="model")
    if not isinstance(merge_patch, Mapping):
        raise WhatIfError(f"the patch must be a JSON object, got {type(merge_patch).__name__}", field="patch")
    resource = resources_visible(scope).filter(cluster=cluster, kind=key[0], namespace=key[1], name=key[2]).first()
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
    return whatif(cluster, [patched], scope=scope)


def _metadata(obj: Mapping[str, Any], field_name: str) -> Any:
    metadata = obj.get("metadata")
    value = metadata.get(field_name) if isinstance(metadata, Mapping) else None
    return value or None
