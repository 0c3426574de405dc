"""What-if: which matrix cells would change if some models or runtimes were changed, added or
deleted, computed before anything is applied.

The cluster's cached `Inventory` (inventory.parsed) is never mutated: a second view is built with
the objects replaced, and only the rows the change can touch are recomputed in both views.
A model change touches that model's rows; a runtime change touches the rows of the models one
of its entries (before or after the change) could match, in the runtime's scope.

Input manifests get the normalisation of loaded manifests (CRD defaults, namespace "default").
Bad input raises `WhatIfError`, naming the document (1-based) and the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from django.conf import settings

import matching
from inventory.models import CLUSTER_SCOPED, MODEL_KINDS, RUNTIME_KINDS, Cluster, Resource
from inventory.parsed import Inventory, load_inventory
from inventory.sources import DEFAULT_NAMESPACE
from matching import in_scope, key_dict, key_text, runtime_could_match
from matching.select import model_error
from matching.types import Model, ObjectKey, Runtime
from matrix.models import CellStatus, MatrixRow

__all__ = [
    "MAX_ERROR_TEXTS",
    "CellDiff",
    "ObjectChange",
    "RowDiff",
    "WhatIfError",
    "WhatIfResult",
    "inventory_from_objects",
    "normalise",
    "parse_documents",
    "parse_key",
    "whatif",
    "whatif_inventory",
    "whatif_model_patch",
]

MAX_ERROR_TEXTS = 50
"""OME's error texts are given for the first rows whose outcome changes only: each lists every
runtime in scope with its reason, which is costly on large clusters."""

# A cell "matches" when OME could use the runtime for the model: ranked or usable by name.
MATCHING = frozenset({CellStatus.SELECTED.value, CellStatus.COMPATIBLE.value, CellStatus.MANUAL_ONLY.value})
_NOT_MATCHING = frozenset({None, CellStatus.EXCLUDED.value, CellStatus.DISABLED.value})


class WhatIfError(ValueError):
    """Input a what-if cannot use; `document` is 1-based, `field` a path such as spec.priority."""

    def __init__(
        self, problem: str, *, document: int | None = None, obj: str | None = None, field: str | None = None
    ) -> None:
        self.problem = problem
        self.document = document
        self.obj = obj
        self.field = field
        parts = []
        if document is not None:
            parts.append(f"document {document}")
        if obj:
            parts.append(obj)
        if field:
            parts.append(field)
        super().__init__(": ".join([*parts, problem]))

    def to_dict(self) -> dict[str, object]:
        return {
            "document": self.document,
            "object": self.obj,
            "field": self.field,
            "problem": self.problem,
            "message": str(self),
        }


# --------------------------------------------------------------------------------------------
# Input


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors and aliases: no manifest needs them, and aliases are how
    a small text expands into a huge value (a "billion laughs")."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "YAML aliases are not accepted", event.start_mark)
        return super().compose_node(parent, index)


def _load_yaml(text: str) -> list[tuple[int, Any]]:
    """(1-based document number, value) for every non-empty document; safe types, no aliases."""
    found: list[tuple[int, Any]] = []
    number = 0
    try:
        for number, value in enumerate(yaml.load_all(text, Loader=_NoAliasLoader), start=1):
            if value is not None:
                found.append((number, value))
    except RecursionError:
        raise WhatIfError("the YAML is nested too deeply", document=number + 1) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise WhatIfError(f"invalid YAML{where}: {problem}", document=number + 1) from None
    return found


def _documents(source: Any) -> list[tuple[int, Any]]:
    if isinstance(source, bytes):
        if len(source) > settings.OME_WHATIF_MAX_BYTES:
            raise WhatIfError(f"the manifests are larger than {settings.OME_WHATIF_MAX_BYTES} bytes")
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as error:
            raise WhatIfError(f"the manifests are not UTF-8 text ({error.reason} at byte {error.start})") from None
    if isinstance(source, str):
        limit = settings.OME_WHATIF_MAX_BYTES
        if len(source) > limit or len(source.encode("utf-8", "surrogatepass")) > limit:
            raise WhatIfError(f"the manifests are larger than {limit} bytes")
        return _load_yaml(source)
    if isinstance(source, Mapping):
        return [(1, source)]
    if isinstance(source, Sequence):
        found: list[tuple[int, Any]] = []
        for number, item in enumerate(source, start=1):
            if isinstance(item, (str, bytes)):
                found += [(number, value) for _, value in _documents(item)]
            elif item is not None:
                found.append((number, item))
        return found
    raise WhatIfError(f"expected manifest text, a mapping or a list of mappings, got {type(source).__name__}")


def _unpack(documents: list[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """A top-level list or a `*List` kind counts as its items (same document number)."""
    for number, value in documents:
        if isinstance(value, list):
            yield from ((number, item) for item in value if item is not None)
        elif (
            isinstance(value, Mapping)
            and str(value.get("kind", "")).endswith("List")
            and isinstance(value.get("items"), list)
        ):
            yield from ((number, item) for item in value["items"] if item is not None)
        else:
            yield number, value


def normalise(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What loading a manifest does to it: CRD defaults, and namespace "default" when absent."""
    result = matching.with_crd_defaults(obj)
    metadata = result.get("metadata")
    if isinstance(metadata, dict) and result.get("kind") not in CLUSTER_SCOPED and not metadata.get("namespace"):
        metadata["namespace"] = DEFAULT_NAMESPACE
    return result


Parsed = Model | Runtime


def parse_documents(source: Any) -> list[tuple[dict[str, Any], Parsed]]:
    """Manifest text (YAML or JSON, several documents), a mapping or a list of mappings ->
    (normalised object, parsed value) per model or runtime. Raises WhatIfError."""
    documents = _documents(source)
    limit = settings.OME_WHATIF_MAX_DOCUMENTS
    parsed: list[tuple[dict[str, Any], Parsed]] = []
    for number, value in _unpack(documents):
        if len(parsed) >= limit:
            raise WhatIfError(f"more than {limit} objects in one what-if", document=number)
        if not isinstance(value, Mapping):
            raise WhatIfError(f"expected a mapping, got {type(value).__name__}", document=number)
        kind = value.get("kind")
        if kind not in MODEL_KINDS and kind not in RUNTIME_KINDS:
            raise WhatIfError(
                f"a what-if takes BaseModel, ClusterBaseModel, ServingRuntime or ClusterServingRuntime, got {kind!r}",
                document=number,
                field="kind",
            )
        try:
            obj = normalise(value)
            item = matching.parse_object(obj)
        except matching.ManifestError as error:
            raise WhatIfError(error.problem, document=number, obj=error.obj, field=error.field) from None
        except RecursionError:
            raise WhatIfError("the object is nested too deeply", document=number) from None
        assert isinstance(item, (Model, Runtime))
        parsed.append((obj, item))
    return parsed


def parse_key(value: Any) -> ObjectKey:
    """A model or runtime key: (kind, namespace, name), {"kind", "namespace", "name"}, or the
    text `Kind/name` (cluster-scoped) or `Kind/namespace/name`."""
    if isinstance(value, str):
        parts = value.split("/")
        if len(parts) == 2:
            value = (parts[0], "", parts[1])
        elif len(parts) == 3:
            value = tuple(parts)
        else:
            raise WhatIfError(f"{value!r} is not Kind/name or Kind/namespace/name", field="deletions")
    elif isinstance(value, Mapping):
        value = (value.get("kind"), value.get("namespace") or "", value.get("name"))
    if not isinstance(value, (tuple, list)) or len(value) != 3 or not all(isinstance(part, str) for part in value):
        raise WhatIfError(f"{value!r} is not a (kind, namespace, name) key", field="deletions")
    kind, namespace, name = value
    if kind not in MODEL_KINDS and kind not in RUNTIME_KINDS:
        raise WhatIfError(f"{kind!r} is not a model or runtime kind", field="deletions")
    if not name:
        raise WhatIfError("the name is empty", field="deletions")
    if kind in CLUSTER_SCOPED:
        namespace = ""
    elif not namespace:
        namespace = DEFAULT_NAMESPACE
    return (kind, namespace, name)


# --------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class ObjectChange:
    """One object the what-if changes: `added`, `changed`, `unchanged` or `removed`."""

    key: ObjectKey
    action: str

    def to_dict(self) -> dict[str, object]:
        return {**(key_dict(self.key) or {}), "action": self.action}


@dataclass(frozen=True)
class CellDiff:
    """One runtime's cell in one (model, namespace) row, before and after. A status is None
    where the cell does not exist (the model or runtime is absent, or out of scope); a score
    and rank only for runtimes OME can auto-select (rank 0 is OME's pick)."""

    runtime: ObjectKey
    old_status: str | None
    new_status: str | None
    old_score: int | None = None
    new_score: int | None = None
    old_rank: int | None = None
    new_rank: int | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "runtime": key_dict(self.runtime),
            "oldStatus": self.old_status,
            "newStatus": self.new_status,
            "oldScore": self.old_score,
            "newScore": self.new_score,
            "oldRank": self.old_rank,
            "newRank": self.new_rank,
        }


@dataclass(frozen=True)
class RowDiff:
    """One (model, namespace) row whose pick, outcome or cells would change.

    Outcomes are MatrixRow's (`selected`, `no-runtime`, `invalid`), or None where the model
    does not exist. `gained`/`lost`: runtimes that would start/stop matching the model
    (selected, compatible or manual-only). `old_error`/`new_error`: OME's error when no runtime
    is selected (NoRuntimeFoundError or the model validation error), given where the outcome
    changes, for the first MAX_ERROR_TEXTS such rows.
    """

    model: ObjectKey
    namespace: str
    old_outcome: str | None
    new_outcome: str | None
    old_selected: ObjectKey | None
    new_selected: ObjectKey | None
    old_score: int | None
    new_score: int | None
    cells: list[CellDiff] = field(default_factory=list)
    gained: list[ObjectKey] = field(default_factory=list)
    lost: list[ObjectKey] = field(default_factory=list)
    old_error: str | None = None
    new_error: str | None = None
    old_row: bool = True
    new_row: bool = True

    @property
    def pick_changed(self) -> bool:
        return self.old_selected != self.new_selected

    def to_dict(self) -> dict[str, object]:
        return {
            "model": key_dict(self.model),
            "namespace": self.namespace,
            "oldOutcome": self.old_outcome,
            "newOutcome": self.new_outcome,
            "oldSelected": key_dict(self.old_selected),
            "newSelected": key_dict(self.new_selected),
            "oldScore": self.old_score,
            "newScore": self.new_score,
            "pickChanged": self.pick_changed,
            "gained": [key_dict(key) for key in self.gained],
            "lost": [key_dict(key) for key in self.lost],
            "oldError": self.old_error,
            "newError": self.new_error,
            "oldRow": self.old_row,
            "newRow": self.new_row,
            "cells": [cell.to_dict() for cell in self.cells],
        }


@dataclass(frozen=True)
class WhatIfResult:
    """What the changes would do to the matrix; `rows` holds only rows that change."""

    cluster: str
    objects: list[ObjectChange]
    rows: list[RowDiff]
    models_evaluated: int
    rows_evaluated: int

    @property
    def cells(self) -> list[tuple[ObjectKey, str, CellDiff]]:
        return [(row.model, row.namespace, cell) for row in self.rows for cell in row.cells]

    def row(self, model: ObjectKey, namespace: str) -> RowDiff | None:
        return next((r for r in self.rows if r.model == model and r.namespace == namespace), None)

    def to_dict(self) -> dict[str, object]:
        return {
            "cluster": self.cluster,
            "objects": [change.to_dict() for change in self.objects],
            "rows": [row.to_dict() for row in self.rows],
            "summary": {
                "rowsChanged": len(self.rows),
                "cellsChanged": sum(len(row.cells) for row in self.rows),
                "picksChanged": sum(1 for row in self.rows if row.pick_changed),
                "modelsEvaluated": self.models_evaluated,
                "rowsEvaluated": self.rows_evaluated,
            },
        }


# --------------------------------------------------------------------------------------------
# The second view


def inventory_from_objects(objects: Iterable[Mapping[str, Any]], *, cluster_id: int = 0) -> Inventory:
    """An Inventory of manifests held in memory (normalised like loaded ones), with ids 1, 2, …
    in input order; malformed objects are recorded as invalid. For previews and tests."""
    inventory = Inventory(cluster_id=cluster_id, fingerprint=f"objects:{id(objects)}")
    for number, raw in enumerate(objects, start=1):
        obj = normalise(raw)
        kind = obj.get("kind")
        metadata = obj.get("metadata")
        if not isinstance(metadata, Mapping):
            metadata = {}
        name = str(metadata.get("name") or "")
        namespace = "" if kind in CLUSTER_SCOPED else str(metadata.get("namespace") or "")
        key = (str(kind), namespace, name)
        inventory.ids[key] = number
        try:
            parsed = matching.parse_object(obj)
        except matching.ManifestError as error:
            inventory.invalid[key] = f"{error.field}: {error.problem}"
            continue
        if isinstance(parsed, Model):
            inventory.models[key] = parsed
        elif isinstance(parsed, Runtime):
            inventory.runtimes[key] = parsed
        else:
            inventory.isvcs[key] = parsed
    return inventory


def replaced_inventory(
    inventory: Inventory, changes: Mapping[ObjectKey, Parsed], deletions: Iterable[ObjectKey]
) -> Inventory:
    """A new Inventory with `changes` put in and `deletions` taken out; `inventory` is untouched.
    New objects get negative ids (they have no resource yet)."""
    view = Inventory(
        cluster_id=inventory.cluster_id,
        models=dict(inventory.models),
        runtimes=dict(inventory.runtimes),
        isvcs=dict(inventory.isvcs),
        invalid=dict(inventory.invalid),
        ids=dict(inventory.ids),
        fingerprint=f"{inventory.fingerprint}+whatif",
    )
    for key in deletions:
        for table in (view.models, view.runtimes, view.invalid, view.ids):
            table.pop(key, None)  # type: ignore[attr-defined]
    next_id = -1
    for key, value in changes.items():
        view.invalid.pop(key, None)
        if key not in view.ids:
            view.ids[key] = next_id
            next_id -= 1
        if isinstance(value, Model):
            view.models[key] = value
        else:
            view.runtimes[key] = value
    return view


# --------------------------------------------------------------------------------------------
# Which rows a change can touch


def affected_models(old: Inventory, new: Inventory, changed: Iterable[ObjectKey]) -> list[ObjectKey]:
    """Model keys whose rows the changed objects can touch, in either view."""
    found: set[ObjectKey] = set()
    runtimes: list[Runtime] = []
    for key in changed:
        if key[0] in MODEL_KINDS:
            found.add(key)
        else:
            runtimes += [view.runtimes[key] for view in (old, new) if key in view.runtimes]
    if runtimes:
        for view in (old, new):
            for model_key, model in view.models.items():
                if model_key in found:
                    continue
                if any(in_scope(rt.key, model_key) and runtime_could_match(rt, model) for rt in runtimes):
                    found.add(model_key)
    return sorted(found)


# --------------------------------------------------------------------------------------------
# Rows and cells in one view


@dataclass
class RowState:
    """One (model, namespace) row of one view."""

    exists: bool
    outcome: str | None
    cells: dict[ObjectKey, tuple[str, int | None, int | None]]
    selected: ObjectKey | None = None
    score: int | None = None
    error_source: Any = None

    def error(self) -> str | None:
        if self.outcome == MatrixRow.Outcome.INVALID:
            return str(self.error_source)
        if self.outcome == MatrixRow.Outcome.NO_RUNTIME and self.error_source is not None:
            return self.error_source.error  # type: ignore[no-any-return]
        return None


def row_state(inventory: Inventory, model_key: ObjectKey, namespace: str) -> RowState:
    """The row as the matrix would store it; computed for any namespace (a namespace without
    ServingRuntimes gives the cluster-scope selection)."""
    exists = (model_key in inventory.models or model_key in inventory.invalid) and namespace in (
        inventory.namespaces_for(model_key)
    )
    if model_key in inventory.invalid:
        return RowState(exists, MatrixRow.Outcome.INVALID, {}, error_source=inventory.invalid[model_key])
    model = inventory.models.get(model_key)
    if model is None:
        return RowState(False, None, {})
    error = model_error(model)
    if error is not None:
        return RowState(exists, MatrixRow.Outcome.INVALID, {}, error_source=error)
    selection = inventory.grid.select(model_key, namespace)
    cells: dict[ObjectKey, tuple[str, int | None, int | None]] = dict.fromkeys(
        selection.manual_keys, (CellStatus.MANUAL_ONLY.value, None, None)
    )
    for rank, match in enumerate(selection.compatible):
        status = CellStatus.SELECTED if rank == 0 else CellStatus.COMPATIBLE
        cells[match.key] = (status.value, match.score, rank)
    if not selection.compatible:
        return RowState(exists, MatrixRow.Outcome.NO_RUNTIME, cells, error_source=selection)
    best = selection.compatible[0]
    return RowState(exists, MatrixRow.Outcome.SELECTED, cells, selected=best.key, score=best.score)


def cell_state(
    inventory: Inventory, row: RowState, runtime_key: ObjectKey, namespace: str
) -> tuple[str | None, int | None, int | None]:
    if runtime_key in row.cells:
        return row.cells[runtime_key]
    runtime = inventory.runtimes.get(runtime_key)
    if row.outcome is None or runtime is None:
        return (None, None, None)
    if not runtime.is_cluster and runtime.namespace != namespace:
        return (None, None, None)
    return (CellStatus.DISABLED.value if runtime.is_disabled else CellStatus.EXCLUDED.value, None, None)


def _reportable(old: str | None, new: str | None) -> bool:
    """A cell that appears or disappears while not matching is not a change worth showing."""
    if old == new:
        return False
    return not ((old is None or new is None) and old in _NOT_MATCHING and new in _NOT_MATCHING)


def diff_row(
    old: Inventory,
    new: Inventory,
    model_key: ObjectKey,
    namespace: str,
    changed_runtimes: Iterable[ObjectKey],
    *,
    with_errors: bool = True,
) -> RowDiff | None:
    """The row's change, or None. OME's error texts (which list every excluded runtime) are
    computed only when the outcome changes and `with_errors` is set."""
    before, after = row_state(old, model_key, namespace), row_state(new, model_key, namespace)
    candidates = set(before.cells) | set(after.cells) | set(changed_runtimes)
    cells = []
    gained, lost = [], []
    for runtime_key in sorted(candidates):
        old_status, old_score, old_rank = cell_state(old, before, runtime_key, namespace)
        new_status, new_score, new_rank = cell_state(new, after, runtime_key, namespace)
        if _reportable(old_status, new_status) or (old_status == new_status and old_score != new_score):
            cells.append(CellDiff(runtime_key, old_status, new_status, old_score, new_score, old_rank, new_rank))
        if new_status in MATCHING and old_status not in MATCHING:
            gained.append(runtime_key)
        elif old_status in MATCHING and new_status not in MATCHING:
            lost.append(runtime_key)
    if not cells and before.outcome == after.outcome and before.selected == after.selected:
        return None
    explain = with_errors and before.outcome != after.outcome
    return RowDiff(
        model=model_key,
        namespace=namespace,
        old_outcome=None if before.outcome is None else str(before.outcome),
        new_outcome=None if after.outcome is None else str(after.outcome),
        old_selected=before.selected,
        new_selected=after.selected,
        old_score=before.score,
        new_score=after.score,
        cells=cells,
        gained=gained,
        lost=lost,
        old_error=before.error() if explain else None,
        new_error=after.error() if explain else None,
        old_row=before.exists,
        new_row=after.exists,
    )


# --------------------------------------------------------------------------------------------
# Entry points


def _keep_creation_time(value: Parsed, previous: Parsed | None) -> Parsed:
    """`kubectl apply` keeps creationTimestamp; a manifest usually has none."""
    if isinstance(value, Runtime) and isinstance(previous, Runtime) and not value.created:
        return dataclasses.replace(value, created=previous.created)
    return value


def whatif_inventory(
    inventory: Inventory,
    documents: Any = (),
    *,
    deletions: Iterable[Any] = (),
    cluster_name: str = "",
) -> WhatIfResult:
    """The what-if over an Inventory (see `whatif`); `inventory` is not modified."""
    parsed = parse_documents(documents) if documents not in ((), None, []) else []
    deleted = [parse_key(item) for item in deletions]
    changes: dict[ObjectKey, Parsed] = {}
    for _obj, value in parsed:
        changes[value.key] = value
    for key in deleted:
        if key in changes:
            raise WhatIfError(f"{key_text(key)} is both changed and deleted", field="deletions")
        if key not in inventory.models and key not in inventory.runtimes and key not in inventory.invalid:
            raise WhatIfError(f"{key_text(key)} is not in the cluster", field="deletions")
    if not changes and not deleted:
        raise WhatIfError("nothing to evaluate: give at least one manifest or deletion")
    objects: list[ObjectChange] = []
    for key, value in list(changes.items()):
        previous = inventory.models.get(key) or inventory.runtimes.get(key)
        value = changes[key] = _keep_creation_time(value, previous)
        if previous is None:
            action = "changed" if key in inventory.invalid else "added"
        else:
            action = "unchanged" if previous == value else "changed"
        objects.append(ObjectChange(key, action))
    objects += [ObjectChange(key, "removed") for key in deleted]
    objects.sort(key=lambda change: change.key)

    new = replaced_inventory(inventory, changes, deleted)
    changed_keys = [change.key for change in objects if change.action != "unchanged"]
    changed_runtimes = [key for key in changed_keys if key[0] in RUNTIME_KINDS]
    rows: list[RowDiff] = []
    evaluated = explained = 0
    models = affected_models(inventory, new, changed_keys)
    for model_key in models:
        namespaces: set[str] = set()
        for view in (inventory, new):
            if model_key in view.models or model_key in view.invalid:
                namespaces.update(view.namespaces_for(model_key))
        for namespace in sorted(namespaces):
            evaluated += 1
            scoped = [key for key in changed_runtimes if key[0] == "ClusterServingRuntime" or key[1] == namespace]
            diff = diff_row(inventory, new, model_key, namespace, scoped, with_errors=explained < MAX_ERROR_TEXTS)
            if diff is not None:
                rows.append(diff)
                if diff.old_outcome != diff.new_outcome:
                    explained += 1
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
