"""Reading the matrix: cells derived from rows, filtered and paged without materialising the
whole grid; reason texts computed only for the cells asked for."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from django.db.models import Q, QuerySet
from matching.select import model_error
from matching.types import ObjectKey

from inventory.models import RUNTIME_KINDS, Cluster, Kind, Resource

from .models import CellStatus, MatrixBuild, MatrixRow
from .rows import row_statuses
from .services import current_build
from .state import load_inventory


@dataclass(frozen=True)
class Cell:
    """One model x runtime cell of the matrix in one namespace."""

    row: MatrixRow
    runtime: Resource
    status: str
    score: int | None
    entry: int | None
    rank: int | None

    @property
    def model(self) -> Resource:
        return self.row.model

    @property
    def namespace(self) -> str:
        return self.row.namespace


def runtimes_in_scope(cluster: Cluster, namespace: str) -> QuerySet[Resource]:
    """The runtimes OME considers in a namespace: its ServingRuntimes and every ClusterServingRuntime."""
    scope = Q(kind=Kind.CLUSTER_SERVING_RUNTIME)
    if namespace:
        scope |= Q(kind=Kind.SERVING_RUNTIME, namespace=namespace)
    return Resource.objects.filter(cluster=cluster, kind__in=RUNTIME_KINDS).filter(scope).order_by("name", "kind")


def row_cells(row: MatrixRow, runtimes: Iterable[Resource]) -> Iterator[Cell]:
    """The cells of one row, for the runtimes given (in scope of the row's namespace)."""
    statuses = row_statuses(row.compatible, row.manual)
    ranked = {(str(k), str(ns), str(n)): (rank, score, entry) for rank, (k, ns, n, score, entry) in enumerate(row.compatible)}
    for runtime in runtimes:
        key = runtime.key
        status = statuses.get(key)
        if status is None:
            status = CellStatus.DISABLED.value if runtime.disabled else CellStatus.EXCLUDED.value
        rank, score, entry = ranked.get(key, (None, None, None))
        yield Cell(row=row, runtime=runtime, status=status, score=score, entry=entry, rank=rank)


def matrix_rows(build: MatrixBuild, *, namespace: str | None = None) -> QuerySet[MatrixRow]:
    rows = MatrixRow.objects.filter(build=build).select_related("model", "selected")
    return rows if namespace is None else rows.filter(namespace=namespace)


def matrix_cells(
    build: MatrixBuild,
    *,
    namespace: str | None = None,
    rows: QuerySet[MatrixRow] | None = None,
    runtimes: Sequence[Resource] | None = None,
    statuses: Iterable[str] = (),
) -> Iterator[Cell]:
    """Every cell of the build (or of the rows and runtimes given) whose status is wanted."""
    wanted = set(statuses)
    rows = rows if rows is not None else matrix_rows(build, namespace=namespace)
    scopes: dict[str, list[Resource]] = {}
    for row in rows.order_by("namespace", "model__name", "model__kind"):
        scope = scopes.get(row.namespace)
        if scope is None:
            scope = scopes[row.namespace] = list(runtimes_in_scope(build.cluster, row.namespace))
            if runtimes is not None:
                allowed = {runtime.pk for runtime in runtimes}
                scope = scopes[row.namespace] = [runtime for runtime in scope if runtime.pk in allowed]
        for cell in row_cells(row, scope):
            if not wanted or cell.status in wanted:
                yield cell


def cell_reason(cluster: Cluster, model_key: ObjectKey, runtime_key: ObjectKey, namespace: str) -> str | None:
    """OME's reason for a cell that is not a match: the runtime's incompatibility, or for a
    compatible runtime that auto-selection skips, why."""
    inventory = load_inventory(cluster)
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


def matrix_current(cluster: Cluster) -> MatrixBuild | None:
    return current_build(cluster)
