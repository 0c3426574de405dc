"""What the model and runtime pages read: a model's runtimes ranked as OME ranks them, the
InferenceServices that resolve to it, a runtime's entries with the models each matches."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from access.scope import Scope
from inventory.models import Cluster, Resource
from inventory.parsed import Inventory, inventory_for, pipeline_fixable
from inventory.selectors import resources_visible
from isvcs.services import IsvcVerdict, isvc_verdicts
from matching import Model, ObjectKey, Runtime
from matrix.cells import manual_of, ranked_of, row_statuses, runtimes_in_scope
from matrix.models import CellStatus, MatrixBuild, MatrixRow
from matrix.selectors import cell_reason_in, current_build, rows_visible


@dataclass(frozen=True)
class RankedRuntime:
    """One runtime of a model's row, as the model page lists it."""

    runtime: Resource
    status: str
    score: int | None = None
    entry: int | None = None
    reason: str | None = None
    patchable: bool = False


@dataclass(frozen=True)
class ModelRanking:
    namespace: str
    row: MatrixRow | None
    ranked: list[RankedRuntime]
    manual: list[RankedRuntime]
    excluded: list[RankedRuntime]


def model_rows(build: MatrixBuild, model: Resource, *, scope: Scope) -> list[MatrixRow]:
    return list(rows_visible(scope).filter(build=build, model=model).select_related("selected").order_by("namespace"))


def _patchable(inventory: Inventory, model_key: ObjectKey, runtime: Resource) -> bool:
    """Whether a diffusionPipeline patch can make the model pass the runtime: only entries that
    require a pipeline can be satisfied by one."""
    return runtime.has_pipeline and bool(pipeline_fixable(inventory, [(model_key, runtime.key)]))


def model_ranking(
    cluster: Cluster, row: MatrixRow | None, model: Resource, namespace: str, *, scope: Scope
) -> ModelRanking:
    """The runtimes of a model's row (read through restrict) in one namespace: ranked as OME
    ranks them (first = OME's pick), manual-only with why, and every other runtime in scope
    with OME's reason, from what `scope` reads."""
    if row is None:
        return ModelRanking(namespace=namespace, row=None, ranked=[], manual=[], excluded=[])
    inventory = inventory_for(cluster, scope=scope)
    in_scope = list(runtimes_in_scope(cluster, namespace).defer("obj"))
    by_key = {runtime.key: runtime for runtime in in_scope}
    statuses = row_statuses(row.compatible, row.manual)
    ranked = [
        RankedRuntime(by_key[item.key], statuses[item.key], item.score, item.entry)
        for item in ranked_of(row.compatible)
        if item.key in by_key
    ]
    manual = [
        RankedRuntime(by_key[item.key], CellStatus.MANUAL_ONLY.value, reason=item.reason)
        for item in manual_of(row.manual)
        if item.key in by_key
    ]
    excluded = [
        RankedRuntime(
            runtime,
            CellStatus.DISABLED.value if runtime.disabled else CellStatus.EXCLUDED.value,
            reason=cell_reason_in(inventory, model.key, runtime.key, namespace),
            patchable=_patchable(inventory, model.key, runtime),
        )
        for runtime in in_scope
        if runtime.key not in statuses
    ]
    excluded.sort(key=lambda item: (not item.patchable, item.status, item.runtime.name))
    return ModelRanking(namespace=namespace, row=row, ranked=ranked, manual=manual, excluded=excluded)


def model_isvcs(cluster: Cluster, model: Resource, *, scope: Scope) -> list[IsvcVerdict]:
    """The InferenceServices that resolve to the model, with today's verdict."""
    return [verdict for verdict in isvc_verdicts(cluster, scope=scope) if verdict.model == model.key]


@dataclass(frozen=True)
class EntryMatches:
    """One entry of a runtime, and the models it is the first passing entry for."""

    index: int
    entry: Any
    models: list[Resource]


def runtime_matches(cluster: Cluster, runtime: Resource, *, scope: Scope) -> tuple[list[EntryMatches], set[int]]:
    """Per entry of the runtime, the models it matches (OME uses a runtime's first passing
    entry); and the ids of the models whose OME pick it is in some namespace; of what `scope` reads."""
    inventory = inventory_for(cluster, scope=scope)
    parsed = inventory.runtimes.get(runtime.key)
    if parsed is None:
        return [], set()
    matched: dict[int, list[int]] = {index: [] for index in range(len(parsed.entries))}
    for model_key in inventory.models:
        entry = inventory.grid.compatible_entries(model_key).get(runtime.key)
        if entry is not None:
            matched[entry].append(inventory.ids[model_key])
    ids = [model_id for found in matched.values() for model_id in found]
    models = {model.pk: model for model in resources_visible(scope).filter(pk__in=ids).defer("obj")}
    entries = [
        EntryMatches(
            index=index,
            entry=entry,
            models=sorted((models[pk] for pk in matched[index] if pk in models), key=lambda m: (m.name, m.kind)),
        )
        for index, entry in enumerate(parsed.entries)
    ]
    build = current_build(cluster)
    picked = (
        set()
        if build is None
        else set(rows_visible(scope).filter(build=build, selected=runtime).values_list("model_id", flat=True))
    )
    return entries, picked


def parsed_object(cluster: Cluster, resource: Resource, *, scope: Scope) -> Model | Runtime | None:
    """The stored model or runtime as `matching` reads it; None when it cannot be parsed or the
    scope does not read it."""
    inventory = inventory_for(cluster, scope=scope)
    return inventory.models.get(resource.key) or inventory.runtimes.get(resource.key)
