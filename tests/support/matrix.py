"""Every cell of a build, materialised: what tests compare the paged and counted reads with."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from django.db.models import QuerySet

from inventory.models import Cluster, Resource
from inventory.parsed import load_inventory
from matrix.cells import Cell, row_cells, runtimes_in_scope
from matrix.models import MatrixBuild, MatrixRow
from matrix.rows import RowData, compute_rows
from matrix.selectors import current_build


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


def matrix_differences(cluster: Cluster) -> list[tuple[str, str, str, str]]:
    """The rows of the cluster's current matrix that differ from a full rebuild from its stored
    inventory now, as (kind, namespace, name, row namespace); [] when they are equal."""
    build = current_build(cluster)
    assert build is not None, f"cluster {cluster} has no matrix"
    inventory = load_inventory(cluster)
    rebuilt = {row.identity: row for row in compute_rows(inventory, inventory.model_keys)}
    stored = {(row.model_id, row.namespace): RowData.from_row(row) for row in MatrixRow.objects.filter(build=build)}
    differing = sorted(
        identity for identity in set(rebuilt) | set(stored) if rebuilt.get(identity) != stored.get(identity)
    )
    return [(*inventory.keys.get(model_id, ("?", "?", str(model_id))), namespace) for model_id, namespace in differing]
