"""Reading the matrix: the current build of a cluster, one cell and OME's reason for it, its
trace, a model's selection, cell counts and history."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import QuerySet

from access.restrict import Action
from access.scope import Scope
from core.cache import VersionedCache
from core.errors import DomainError
from inventory.models import Cluster, Resource
from inventory.parsed import Inventory, inventory_for
from matching import (
    CheckReport,
    ObjectKey,
    ScoreTerms,
    Selection,
    entry_weights,
    model_error,
    score_breakdown,
    score_terms,
)

from .cells import MATCH_STATUSES, Cell, ScopeKeys, row_cells, row_statuses, runtimes_in_scope, status_counts
from .models import CellChange, CellStatus, MatrixBuild, MatrixRow


class MatrixMissing(DomainError, LookupError):
    """The cluster has no published matrix yet."""

    http_status = 404
    code = "no_matrix"

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(
            f"cluster {cluster.name!r} has no matrix yet; `manage.py recompute_matrix --cluster {cluster.name}` builds it",
            field="cluster",
        )


def _newest_succeeded(builds: QuerySet[MatrixBuild]) -> MatrixBuild | None:
    return builds.filter(status=MatrixBuild.Status.SUCCEEDED).order_by("-finished_at", "-pk").first()


def current_build(cluster: Cluster) -> MatrixBuild | None:
    """The build readers see: the newest that succeeded; its cluster is the one given."""
    build = _newest_succeeded(MatrixBuild.objects.filter(cluster=cluster))
    if build is not None:
        build.cluster = cluster  # saves readers a query
    return build


def current_build_named(name: str, *, scope: Scope) -> MatrixBuild | None:
    """`current_build` of the cluster with this name, if the scope reads it, with its cluster,
    in one query (what a conditional GET costs)."""
    visible = MatrixBuild.objects.restrict(scope, Action.VIEW)
    return _newest_succeeded(visible.select_related("cluster").filter(cluster__name=name))


def matrix_build_get(cluster: Cluster) -> MatrixBuild:
    """`current_build`; MatrixMissing when there is none."""
    build = current_build(cluster)
    if build is None:
        raise MatrixMissing(cluster)
    return build


def matrix_version(cluster: Cluster) -> str:
    """A token that changes whenever the matrix readers see changes (a new build or an update)."""
    build = current_build(cluster)
    if build is None:
        return "none"
    stamp = build.updated_at or build.finished_at
    return f"{build.pk}-{stamp.timestamp():.6f}" if stamp else str(build.pk)


def matrix_build_list(scope: Scope) -> QuerySet[MatrixBuild]:
    """Builds of the clusters the scope reads (the API shows their totals to readers of all of it)."""
    return MatrixBuild.objects.restrict(scope, Action.VIEW).select_related("cluster")


def latest_builds_by_cluster(scope: Scope) -> dict[int, dict[str, MatrixBuild]]:
    """Cluster id -> build status -> the newest build of that status, of the clusters the scope reads."""
    builds: dict[int, dict[str, MatrixBuild]] = {}
    for build in MatrixBuild.objects.restrict(scope, Action.VIEW).order_by("started_at", "pk"):
        builds.setdefault(build.cluster_id, {})[build.status] = build
    return builds


def rows_visible(scope: Scope) -> QuerySet[MatrixRow]:
    """The matrix rows the scope reads: those of its namespaces and the cluster-scope rows."""
    return MatrixRow.objects.restrict(scope, Action.VIEW)


# (cluster id, the namespaces a reader reads) -> those a build generation has rows for, ""
# (cluster scope) first: each entry is one reader's answer, read through restrict.
_NAMESPACES: VersionedCache[tuple[object, ...], tuple[str, ...]] = VersionedCache("matrix_namespaces")


def matrix_namespaces(build: MatrixBuild, *, scope: Scope) -> list[str]:
    """The namespaces the build has rows for that the scope reads, "" (cluster scope) first:
    read through restrict once per build generation for the readers of the same namespaces."""

    def load(_stale: object) -> tuple[str, ...]:
        rows = rows_visible(scope).filter(build=build).order_by("namespace")
        return tuple(rows.values_list("namespace", flat=True).distinct())

    owner = (build.cluster_id, scope.read_namespaces(build.cluster.name))
    return list(_NAMESPACES.get(owner, build.generation, load))


def cell_change_list(scope: Scope) -> QuerySet[CellChange]:
    """History entries of the rows the scope reads."""
    return CellChange.objects.restrict(scope, Action.VIEW).select_related("cluster")


def model_history(cluster: Cluster, model: Resource, *, scope: Scope, limit: int = 100) -> list[CellChange]:
    return list(
        cell_change_list(scope).filter(
            cluster=cluster, model_kind=model.kind, model_namespace=model.namespace, model_name=model.name
        )[:limit]
    )


def cell_status_counts(build: MatrixBuild, *, scope: Scope) -> Counter[str]:
    """How many cells of the build have each status (every status present, maybe 0), in the
    rows the scope reads."""
    scopes: dict[str, ScopeKeys] = {}
    counts: Counter[str] = Counter(dict.fromkeys(CellStatus.values, 0))
    rows = rows_visible(scope).filter(build=build).values_list("namespace", "compatible", "manual")
    for namespace, compatible, manual in rows.iterator(chunk_size=2000):
        if namespace not in scopes:
            scopes[namespace] = ScopeKeys.of(runtimes_in_scope(build.cluster, namespace))
        counts.update(status_counts(row_statuses(compatible, manual), scopes[namespace]))
    return counts


# (cluster id, the namespaces a reader reads) -> the part of the inventory (inventory_for) the
# cells of a build generation are explained with to the readers of those namespaces.
_INVENTORIES: VersionedCache[tuple[object, ...], Inventory] = VersionedCache("reason_inventories")


def build_inventory(build: MatrixBuild, *, scope: Scope) -> Inventory:
    """The parsed inventory, as the scope reads it, the build's readers explain cells with,
    loaded once per generation."""
    owner = (build.cluster_id, scope.read_namespaces(build.cluster.name))
    return _INVENTORIES.get(owner, build.generation, lambda _stale: inventory_for(build.cluster, scope=scope))


def cell_reason(
    cluster: Cluster, model_key: ObjectKey, runtime_key: ObjectKey, namespace: str, *, scope: Scope
) -> str | None:
    """OME's reason for a cell that is not a match: the runtime's incompatibility, or for a
    compatible runtime that auto-selection skips, why; from what the scope reads."""
    return cell_reason_in(inventory_for(cluster, scope=scope), model_key, runtime_key, namespace)


def cell_reason_in(inventory: Inventory, model_key: ObjectKey, runtime_key: ObjectKey, namespace: str) -> str | None:
    if model_key in inventory.invalid:
        return inventory.invalid[model_key]
    if model_key not in inventory.models or runtime_key not in inventory.runtimes:
        return None
    invalid = model_error(inventory.models[model_key])
    if invalid:
        return invalid
    reason = inventory.grid.reason(model_key, runtime_key)
    if reason:
        return reason
    return inventory.grid.select(model_key, namespace).manual_keys.get(runtime_key)


def cell_reasoner(build: MatrixBuild, *, scope: Scope) -> Callable[[Cell], str | None]:
    """`cell_reason` for the build's cells, from the inventory read once per build generation;
    None for a match."""
    inventory = build_inventory(build, scope=scope)

    def reason(cell: Cell) -> str | None:
        if cell.status in MATCH_STATUSES:
            return None
        return cell_reason_in(inventory, cell.model.key, cell.runtime.key, cell.namespace)

    return reason


def cell_get(build: MatrixBuild, *, model: Resource, runtime: Resource, namespace: str, scope: Scope) -> Cell | None:
    """One cell of the build; None when the model has no row in the namespace the scope reads
    or the runtime is not in the namespace's runtimes."""
    row = rows_visible(scope).filter(build=build, model=model, namespace=namespace).select_related("model").first()
    if row is None or not runtimes_in_scope(build.cluster, namespace).filter(pk=runtime.pk).exists():
        return None
    return next(row_cells(row, [runtime]))


@dataclass(frozen=True)
class CellTrace:
    """`matching.check` for the stored objects, and each entry's score arithmetic."""

    check: CheckReport
    breakdown: list[str]
    terms: list[ScoreTerms]
    weights: list[tuple[tuple[str, int, str], ...]]
    """Each entry's weights as the scorer uses them, and where each comes from."""


def cell_trace(cluster: Cluster, model_key: ObjectKey, runtime_key: ObjectKey, *, scope: Scope) -> CellTrace | None:
    """None when either object cannot be parsed (its error is the cell's reason) or the scope
    does not read it."""
    inventory = inventory_for(cluster, scope=scope)
    model, runtime = inventory.models.get(model_key), inventory.runtimes.get(runtime_key)
    if model is None or runtime is None:
        return None
    return CellTrace(
        check=inventory.grid.check(model_key, runtime_key),
        breakdown=[score_breakdown(model, entry, inventory.behaviour) for entry in runtime.entries],
        terms=[score_terms(model, entry, inventory.behaviour) for entry in runtime.entries],
        weights=[entry_weights(entry) for entry in runtime.entries],
    )


def selection_exclusions(
    cluster: Cluster, model_key: ObjectKey, namespace: str | None = None, *, scope: Scope
) -> dict[ObjectKey, str]:
    """The runtimes in scope of the namespace that cannot serve the model, each by its key with
    OME's reason, of those the scope reads: `Selection.excluded` names them only, and a name can
    be used in two scopes."""
    inventory = inventory_for(cluster, scope=scope)
    if model_key not in inventory.models:
        return {}
    where = model_key[1] if namespace is None else namespace
    compatible = inventory.grid.compatible_entries(model_key)
    return {
        key: inventory.grid.reason(model_key, key) or ""
        for key, runtime in sorted(inventory.runtimes.items())
        if (runtime.is_cluster or key[1] == where) and key not in compatible
    }


def model_selection(cluster: Cluster, model_key: ObjectKey, namespace: str | None = None, *, scope: Scope) -> Selection:
    """`matching.select` for a stored model against the cluster's runtimes, in `namespace`
    (default: the model's). A model that cannot be parsed gets an empty selection with its error."""
    if not scope.reads(cluster.name, model_key[1] if namespace is None else namespace):
        raise LookupError(f"no model {'/'.join(part for part in model_key if part)} in cluster {cluster.name!r}")
    inventory = inventory_for(cluster, scope=scope)
    if model_key in inventory.models:
        return inventory.grid.select(model_key, namespace)
    error = inventory.invalid.get(model_key)
    if error is None:
        raise LookupError(f"no model {'/'.join(part for part in model_key if part)} in cluster {cluster.name!r}")
    return Selection(
        model=model_key[2],
        namespace=model_key[1] if namespace is None else namespace,
        compatible=[],
        manual_only={},
        excluded=dict,
        error=lambda _excluded: error,
    )
