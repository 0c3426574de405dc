"""What the matrix page reads: one page of the grid (rows by columns), the namespaces and
model facets of its filters, and the counts at its top."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db.models import QuerySet

from access.scope import Scope
from core.cache import query_key
from inventory.models import MODEL_KINDS, Cluster, Resource
from inventory.selectors import resources_visible
from isvcs.services import isvc_at_risk, isvc_verdicts
from lint.selectors import lint_open_counts
from matching import ObjectKey
from matrix.cells import Cell, row_cells, row_statuses, runtimes_in_scope
from matrix.counts import ModelCounts, model_counts
from matrix.models import MatrixBuild, MatrixRow
from matrix.paging import CELL_LISTS, CellList
from matrix.selectors import rows_visible

GRID_ROWS_PER_PAGE = 50
GRID_COLUMNS_PER_PAGE = 60
GRID_ORDER = ("model__name", "model__kind", "namespace")


def model_facets(cluster: Cluster, *, scope: Scope) -> dict[str, list[str]]:
    """The distinct values the matrix's model filters can take in a cluster, for its drop-downs."""
    columns = ("model_format", "model_architecture", "pipeline_class", "storage_scheme")
    found: dict[str, set[str]] = {column: set() for column in columns}
    rows = resources_visible(scope).filter(cluster=cluster, kind__in=MODEL_KINDS).values_list(*columns).distinct()
    for values in rows:
        for column, value in zip(columns, values, strict=True):
            if value:
                found[column].add(value)
    return {column: sorted(values) for column, values in found.items()}


@dataclass(frozen=True)
class GridPage:
    """One page of the matrix: rows (models) by columns (runtimes), each row's cells in column order."""

    rows: list[tuple[MatrixRow, list[Cell]]]
    columns: list[Resource]
    rows_total: int
    page: int
    pages: int
    columns_total: int
    column_page: int
    column_pages: int
    columns_mode: str
    per_page: int = GRID_ROWS_PER_PAGE
    per_column_page: int = GRID_COLUMNS_PER_PAGE

    @property
    def row_start(self) -> int:
        return (self.page - 1) * self.per_page + 1 if self.rows else 0

    @property
    def row_end(self) -> int:
        return (self.page - 1) * self.per_page + len(self.rows)

    @property
    def column_start(self) -> int:
        return (self.column_page - 1) * self.per_column_page + 1 if self.columns else 0

    @property
    def column_end(self) -> int:
        return (self.column_page - 1) * self.per_column_page + len(self.columns)


def _rows_with_status(
    build: MatrixBuild, rows: QuerySet[MatrixRow], runtime_ids: frozenset[int] | None, statuses: frozenset[str]
) -> Sequence[int]:
    """Ids of the rows (in grid order) with at least one cell in `statuses` among the runtimes
    allowed, found once per build generation for each query (matrix.paging.CELL_LISTS): every
    row's cells are counted (~80 ms for a 2,000 x 300 cluster), and each page of the filtered
    grid asks again."""
    key = query_key(rows)
    if key is None:
        return []
    owner = ("grid", build.cluster_id, key, runtime_ids, statuses)
    cells = CELL_LISTS.get(
        owner,
        build.generation,
        lambda _stale: CellList(build, rows, runtime_ids=runtime_ids, statuses=statuses, order=GRID_ORDER),
    )
    return cells.row_ids()


def _page_number(value: object, pages: int) -> int:
    try:
        number = int(str(value))
    except (TypeError, ValueError):
        return 1
    return min(max(number, 1), max(pages, 1))


def _relevant_columns(page_rows: list[MatrixRow], scope: list[Resource]) -> list[Resource]:
    """The runtimes that match a model of the page (selected, compatible or manual-only), and the
    runtimes requiring a diffusion pipeline whose class is a page model's architecture or pipeline
    class: the near misses a pipeline patch can fix."""
    matched: set[ObjectKey] = set()
    classes: set[str] = set()
    for row in page_rows:
        matched |= set(row_statuses(row.compatible, row.manual))
        classes |= {value for value in (row.model.model_architecture, row.model.pipeline_class) if value}
    return [
        runtime
        for runtime in scope
        if runtime.key in matched or (runtime.has_pipeline and classes & set(runtime.pipeline_class.split(",")))
    ]


def matrix_grid(
    build: MatrixBuild,
    rows: QuerySet[MatrixRow],
    *,
    namespace: str | None,
    statuses: Iterable[str] = (),
    page: object = 1,
    column_page: object = 1,
    columns_mode: str = "page",
    runtime_ids: Iterable[int] | None = None,
    per_page: int = GRID_ROWS_PER_PAGE,
    per_column_page: int = GRID_COLUMNS_PER_PAGE,
) -> GridPage:
    """One page of the matrix of `namespace` (None: every namespace the rows have, each model's
    rows together). `rows` are the build's filtered rows; `statuses` keeps the rows (and, with
    `columns_mode="page"`, the columns) having a cell in one of them. Columns: `page` = the
    runtimes relevant to the page's rows (see `_relevant_columns`), `all` = every runtime in
    scope; either is paged by `per_column_page`."""
    wanted = frozenset(statuses)
    allowed = None if runtime_ids is None else frozenset(runtime_ids)
    if namespace is not None:
        rows = rows.filter(namespace=namespace)
    namespaces = (
        [namespace] if namespace is not None else list(rows.order_by().values_list("namespace", flat=True).distinct())
    )
    scope = [
        runtime
        for runtime in runtimes_in_scope(build.cluster, *namespaces).defer("obj")
        if allowed is None or runtime.pk in allowed
    ]
    ordered = rows.select_related("model", "selected").defer("model__obj", "selected__obj").order_by(*GRID_ORDER)
    if wanted:
        row_ids = _rows_with_status(build, ordered, allowed, wanted)
        total = len(row_ids)
    else:
        row_ids = None
        total = ordered.count()
    pages = max(1, -(-total // per_page))
    number = _page_number(page, pages)
    start = (number - 1) * per_page
    if row_ids is not None:
        by_id = {row.pk: row for row in ordered.filter(pk__in=row_ids[start : start + per_page])}
        page_rows = [by_id[row_id] for row_id in row_ids[start : start + per_page] if row_id in by_id]
    else:
        page_rows = list(ordered[start : start + per_page])
    if columns_mode == "all":
        columns = scope
    else:
        columns = _relevant_columns(page_rows, scope)
        if wanted:
            keep = {cell.runtime.pk for row in page_rows for cell in row_cells(row, columns) if cell.status in wanted}
            columns = [runtime for runtime in columns if runtime.pk in keep]
    column_pages = max(1, -(-len(columns) // per_column_page))
    column_number = _page_number(column_page, column_pages)
    first = (column_number - 1) * per_column_page
    shown = columns[first : first + per_column_page]
    return GridPage(
        rows=[(row, list(row_cells(row, shown))) for row in page_rows],
        columns=shown,
        rows_total=total,
        page=number,
        pages=pages,
        columns_total=len(columns),
        column_page=column_number,
        column_pages=column_pages,
        columns_mode="all" if columns_mode == "all" else "page",
        per_page=per_page,
        per_column_page=per_column_page,
    )


@dataclass(frozen=True)
class MatrixSummary:
    models: ModelCounts
    isvcs: int
    isvcs_at_risk: int
    lint: dict[str, int]

    @property
    def lint_total(self) -> int:
        return sum(self.lint.values())


def matrix_summary(cluster: Cluster, build: MatrixBuild, namespace: str | None, *, scope: Scope) -> MatrixSummary:
    """The counts at the top of the matrix: the models of the namespace (None: across the
    cluster) by outcome (`matrix.counts`, as the fleet and the API count them); InferenceServices
    at risk in the cluster, lint findings by severity."""
    verdicts = isvc_verdicts(cluster, scope=scope)
    return MatrixSummary(
        models=model_counts(rows_visible(scope).filter(build=build), namespace),
        isvcs=len(verdicts),
        isvcs_at_risk=sum(1 for verdict in verdicts if isvc_at_risk(verdict)),
        lint=lint_open_counts(cluster, scope=scope),
    )
