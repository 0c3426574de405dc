"""Reading the matrix: cells derived from rows, filtered and paged without materialising the
whole grid; reason texts computed only for the cells asked for."""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from django.core.exceptions import EmptyResultSet
from django.db.models import Count, Q, QuerySet

import matching
from core.errors import DomainError
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Kind, Resource
from inventory.parsed import Inventory, load_inventory, pipeline_fixable
from isvcs.services import IsvcVerdict, isvc_at_risk, isvc_verdicts
from lint.selectors import lint_report_get
from matching import CheckReport, Model, Runtime, Selection
from matching.score import score_breakdown
from matching.select import model_error
from matching.types import ObjectKey

from .models import CellChange, CellStatus, MatrixBuild, MatrixRow
from .rows import row_statuses
from .services import current_build


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
    ranked = {
        (str(k), str(ns), str(n)): (rank, score, entry) for rank, (k, ns, n, score, entry) in enumerate(row.compatible)
    }
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
    return _reason(load_inventory(cluster), model_key, runtime_key, namespace)


def _reason(inventory: Inventory, model_key: ObjectKey, runtime_key: ObjectKey, namespace: str) -> str | None:
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


# --- Read by the API (and the pages): the current build, paged cells, one cell, history. ---

MATCH_STATUSES = frozenset({CellStatus.SELECTED.value, CellStatus.COMPATIBLE.value})
_T = TypeVar("_T")


class MatrixMissing(DomainError, LookupError):
    """The cluster has no published matrix yet."""

    http_status = 404
    code = "no_matrix"

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(
            f"cluster {cluster.name!r} has no matrix yet; `manage.py recompute_matrix --cluster {cluster.name}` builds it",
            field="cluster",
        )


def matrix_build_get(cluster: Cluster) -> MatrixBuild:
    """The build readers see; MatrixMissing when there is none."""
    build = current_build(cluster)
    if build is None:
        raise MatrixMissing(cluster)
    build.cluster = cluster  # saves readers a query
    return build


def matrix_build_list() -> QuerySet[MatrixBuild]:
    return MatrixBuild.objects.select_related("cluster")


def cell_change_list() -> QuerySet[CellChange]:
    return CellChange.objects.select_related("cluster")


class _Memo:
    """A small per-process LRU memo, safe to share between threads (a value may be computed
    twice by a race; either result is right)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], _T]) -> _T:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return cast(_T, self._items[key])
        value = make()
        with self._lock:
            self._items[key] = value
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return value


# What a build generation fixes is worked out once per process: a full build is a new build,
# and every incremental update stamps `updated_at`, so the key changes whenever cells may.
_SCOPES = _Memo(64)
_LAYOUTS = _Memo(64)
_INVENTORIES = _Memo(2)


def _generation(build: MatrixBuild) -> tuple[object, ...]:
    return (build.pk, build.cluster_id, build.started_at, build.finished_at, build.updated_at)


def build_inventory(build: MatrixBuild) -> Inventory:
    """The parsed inventory the build's readers explain cells with, loaded once per generation."""
    return _INVENTORIES.get(("inventory", *_generation(build)), lambda: load_inventory(build.cluster))


@dataclass
class _Scope:
    """The runtimes of one namespace's cells: keys for counting, objects only to make cells."""

    query: QuerySet[Resource]
    keys: frozenset[ObjectKey]
    disabled: frozenset[ObjectKey]
    _runtimes: list[Resource] | None = None

    @property
    def runtimes(self) -> list[Resource]:
        if self._runtimes is None:
            self._runtimes = list(self.query.only("id", "cluster_id", "kind", "namespace", "name", "disabled"))
        return self._runtimes


@dataclass(frozen=True)
class _Layout:
    """Where the runs of a CellList start: `starts[i]` is the first cell of run i (ascending),
    `total` the number of cells. A run is every row of `namespaces[i]` (`per_row[i]` cells
    each) or, with a status filter, the one row `row_ids[i]`; arrays keep that compact."""

    starts: Sequence[int]
    total: int
    namespaces: Sequence[str] = ()
    per_row: Sequence[int] = ()
    row_ids: Sequence[int] = ()

    def runs(self, start: int, stop: int) -> Iterator[tuple[int, int, int]]:
        """(run, first, last) for the runs that cells [start, stop) touch; first and last are
        cell offsets within the run."""
        for run in range(max(0, bisect_right(self.starts, start) - 1), bisect_left(self.starts, stop)):
            begin = self.starts[run]
            end = self.starts[run + 1] if run + 1 < len(self.starts) else self.total
            yield run, max(start, begin) - begin, min(stop, end) - begin


class CellList:
    """The cells of some rows of a build, restricted to some runtimes and statuses, as a lazy
    sequence. `count()` and slices read only what they need, so Django's Paginator (and DRF's
    pagination) page it as they page a QuerySet; iterating streams every cell, rows read in chunks.

    Without a status filter every row of a namespace has one cell per runtime in scope: counting
    and slicing are arithmetic over per-namespace row counts. With one, each row's count comes
    from its stored runtime lists; no cells are made for the rows before the page.
    """

    ORDER = ("namespace", "model__name", "model__kind")
    COLUMNS = (
        "namespace",
        "outcome",
        "compatible",
        "manual",
        "selected_score",
        "invalid_reason",
        "model",
        "model__cluster_id",
        "model__kind",
        "model__namespace",
        "model__name",
    )

    def __init__(
        self,
        build: MatrixBuild,
        rows: QuerySet[MatrixRow],
        *,
        runtime_ids: Iterable[int] | None = None,
        statuses: Iterable[str] = (),
    ) -> None:
        self.build = build
        # Only the columns cells need: SQLite would read through each model's manifest otherwise.
        self.rows = rows.select_related("model").only(*self.COLUMNS)
        self.runtime_ids = None if runtime_ids is None else frozenset(runtime_ids)
        self.statuses = frozenset(statuses)
        self._layout_memo: _Layout | None = None

    def _scope(self, namespace: str) -> _Scope:
        key = ("scope", *_generation(self.build), namespace, self.runtime_ids)
        return _SCOPES.get(key, lambda: self._load_scope(namespace))

    def _load_scope(self, namespace: str) -> _Scope:
        query = runtimes_in_scope(self.build.cluster, namespace)
        if self.runtime_ids is not None:
            query = query.filter(pk__in=self.runtime_ids)
        columns = query.values_list("kind", "namespace", "name", "disabled")
        heads = [((kind, ns, name), disabled) for kind, ns, name, disabled in columns]
        return _Scope(
            query=query,
            keys=frozenset(key for key, _disabled in heads),
            disabled=frozenset(key for key, disabled in heads if disabled),
        )

    def _cells(self, row: MatrixRow) -> list[Cell]:
        runtimes = self._scope(row.namespace).runtimes
        if self.statuses and not self.statuses & {CellStatus.EXCLUDED, CellStatus.DISABLED}:
            # Only runtimes the row lists can have these statuses: make no cells for the others.
            listed = {
                key for key, status in row_statuses(row.compatible, row.manual).items() if status in self.statuses
            }
            runtimes = [runtime for runtime in runtimes if runtime.key in listed]
        cells = row_cells(row, runtimes)
        return [cell for cell in cells if not self.statuses or cell.status in self.statuses]

    def _row_count(self, namespace: str, compatible: list[list[object]], manual: list[list[str]]) -> int:
        """What `len(self._cells(row))` would be, from the row's runtime lists alone."""
        scope = self._scope(namespace)
        statuses = row_statuses(compatible, manual)
        counts = Counter(status for key, status in statuses.items() if key in scope.keys)
        counts[CellStatus.DISABLED.value] = sum(1 for key in scope.disabled if key not in statuses)
        counts[CellStatus.EXCLUDED.value] = len(scope.keys) - sum(counts.values())
        return sum(counts[status] for status in self.statuses)

    def _layout(self) -> _Layout:
        if self._layout_memo is None:
            try:
                sql, params = self.rows.query.sql_with_params()
            except EmptyResultSet:
                self._layout_memo = _Layout(starts=(), total=0)
            else:
                key = ("layout", *_generation(self.build), sql, params, self.runtime_ids, self.statuses)
                self._layout_memo = _LAYOUTS.get(key, self._measure)
        return self._layout_memo

    def _measure(self) -> _Layout:
        starts, total = array("q"), 0
        if not self.statuses:
            namespaces, sizes = [], []
            groups = self.rows.order_by("namespace").values_list("namespace").annotate(rows=Count("pk"))
            for namespace, rows in groups:
                per_row = len(self._scope(namespace).keys)
                if per_row and rows:
                    starts.append(total)
                    namespaces.append(namespace)
                    sizes.append(per_row)
                    total += rows * per_row
            return _Layout(starts=starts, total=total, namespaces=namespaces, per_row=sizes)
        row_ids = array("q")
        heads = self.rows.order_by(*self.ORDER).values_list("pk", "namespace", "compatible", "manual")
        for row_id, namespace, compatible, manual in heads.iterator(chunk_size=2000):
            size = self._row_count(namespace, compatible, manual)
            if size:
                starts.append(total)
                row_ids.append(row_id)
                total += size
        return _Layout(starts=starts, total=total, row_ids=row_ids)

    def count(self) -> int:
        return self._layout().total

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index: slice) -> list[Cell]:
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise TypeError("CellList supports slices without a step only")
        layout = self._layout()
        runs = list(layout.runs(*index.indices(layout.total)[:2]))
        cells: list[Cell] = []
        if layout.row_ids:
            wanted = [layout.row_ids[run] for run, _first, _last in runs]
            # A row replaced by an incremental update since the count is skipped: the page runs short.
            by_id = {row.pk: row for row in self.rows.filter(pk__in=wanted)} if wanted else {}
            for row_id, (_run, first, last) in zip(wanted, runs, strict=True):
                row = by_id.get(row_id)
                cells += self._cells(row)[first:last] if row is not None else []
            return cells
        for run, first, last in runs:
            # Every row of the run has a cell per runtime in scope: the i-th cell of the run is
            # row i // per_row, runtime i % per_row. Make only the cells of the slice.
            namespace, per_row = layout.namespaces[run], layout.per_row[run]
            runtimes = self._scope(namespace).runtimes
            rows = self.rows.filter(namespace=namespace).order_by(*self.ORDER)
            for number, row in enumerate(rows[first // per_row : -(-last // per_row)], start=first // per_row):
                low, high = max(first - number * per_row, 0), min(last - number * per_row, per_row)
                cells += row_cells(row, runtimes[low:high])
        return cells

    def __iter__(self) -> Iterator[Cell]:
        for row in self.rows.order_by(*self.ORDER).iterator(chunk_size=1000):
            yield from self._cells(row)


def cell_reasoner(build: MatrixBuild) -> Callable[[Cell], str | None]:
    """`cell_reason` for the build's cells, from the inventory read once per build generation;
    None for a match."""
    inventory = build_inventory(build)

    def reason(cell: Cell) -> str | None:
        if cell.status in MATCH_STATUSES:
            return None
        return _reason(inventory, cell.model.key, cell.runtime.key, cell.namespace)

    return reason


def cell_get(build: MatrixBuild, *, model: Resource, runtime: Resource, namespace: str) -> Cell | None:
    """One cell of the build; None when the model has no row in the namespace or the runtime
    is not in its scope."""
    row = MatrixRow.objects.filter(build=build, model=model, namespace=namespace).select_related("model").first()
    if row is None or not runtimes_in_scope(build.cluster, namespace).filter(pk=runtime.pk).exists():
        return None
    return next(row_cells(row, [runtime]))


@dataclass(frozen=True)
class CellTrace:
    """`matching.check` for the stored objects, and each entry's score arithmetic."""

    check: CheckReport
    breakdown: list[str]


def cell_trace(cluster: Cluster, model_key: ObjectKey, runtime_key: ObjectKey) -> CellTrace | None:
    """None when either object cannot be parsed (its error is the cell's reason)."""
    inventory = load_inventory(cluster)
    model, runtime = inventory.models.get(model_key), inventory.runtimes.get(runtime_key)
    if model is None or runtime is None:
        return None
    return CellTrace(
        check=inventory.grid.check(model_key, runtime_key),
        breakdown=[score_breakdown(model, entry) for entry in runtime.entries],
    )


def model_selection(cluster: Cluster, model_key: ObjectKey, namespace: str | None = None) -> Selection:
    """`matching.select` for a stored model against the cluster's runtimes, in `namespace`
    (default: the model's). A model that cannot be parsed gets an empty selection with its error."""
    inventory = load_inventory(cluster)
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


# --- Read by the HTML pages (matrix.views): the matrix grid, its counts, model and runtime pages. ---

GRID_ROWS_PER_PAGE = 50
GRID_COLUMNS_PER_PAGE = 60
NON_MATCH_STATUSES = frozenset({CellStatus.EXCLUDED.value, CellStatus.DISABLED.value})


def matrix_namespaces(build: MatrixBuild) -> list[str]:
    """The namespaces the build has rows for, "" (cluster scope) first."""
    found = MatrixRow.objects.filter(build=build).order_by("namespace").values_list("namespace", flat=True).distinct()
    return list(found)


def model_facets(cluster: Cluster) -> dict[str, list[str]]:
    """The distinct values the matrix's model filters can take in a cluster, for its drop-downs."""
    columns = ("model_format", "model_architecture", "pipeline_class", "storage_scheme")
    found: dict[str, set[str]] = {column: set() for column in columns}
    rows = Resource.objects.filter(cluster=cluster, kind__in=MODEL_KINDS).values_list(*columns).distinct()
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


def _rows_with_status(rows: QuerySet[MatrixRow], scope: Sequence[Resource], statuses: frozenset[str]) -> list[int]:
    """Ids of the rows (in display order) with at least one cell in `statuses` among `scope`."""
    keys = frozenset(runtime.key for runtime in scope)
    disabled = frozenset(runtime.key for runtime in scope if runtime.disabled)
    wanted = []
    for row_id, compatible, manual in rows.values_list("pk", "compatible", "manual").iterator(chunk_size=2000):
        found = {status for key, status in row_statuses(compatible, manual).items() if key in keys}
        listed = set(row_statuses(compatible, manual)) & keys
        if disabled - listed:
            found.add(CellStatus.DISABLED.value)
        if len(keys - listed - disabled):
            found.add(CellStatus.EXCLUDED.value)
        if found & statuses:
            wanted.append(row_id)
    return wanted


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
    namespace: str,
    statuses: Iterable[str] = (),
    page: object = 1,
    column_page: object = 1,
    columns_mode: str = "page",
    runtime_ids: Iterable[int] | None = None,
    per_page: int = GRID_ROWS_PER_PAGE,
    per_column_page: int = GRID_COLUMNS_PER_PAGE,
) -> GridPage:
    """One page of the matrix of `namespace`. `rows` are the build's filtered rows of that
    namespace; `statuses` keeps the rows (and, with `columns_mode="page"`, the columns) having a
    cell in one of them. Columns: `page` = the runtimes relevant to the page's rows (see
    `_relevant_columns`), `all` = every runtime in scope; either is paged by `per_column_page`."""
    wanted = frozenset(statuses)
    allowed = None if runtime_ids is None else frozenset(runtime_ids)
    scope = [
        runtime
        for runtime in runtimes_in_scope(build.cluster, namespace).defer("obj")
        if allowed is None or runtime.pk in allowed
    ]
    ordered = (
        rows.filter(namespace=namespace)
        .select_related("model", "selected")
        .defer("model__obj", "selected__obj")
        .order_by("model__name", "model__kind")
    )
    if wanted:
        row_ids = _rows_with_status(ordered, scope, wanted)
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


def matrix_version(cluster: Cluster) -> str:
    """A token that changes whenever the matrix readers see changes (a new build or an update)."""
    build = (
        MatrixBuild.objects.filter(cluster=cluster, status=MatrixBuild.Status.SUCCEEDED)
        .order_by("-finished_at", "-pk")
        .values_list("pk", "finished_at", "updated_at")
        .first()
    )
    if build is None:
        return "none"
    pk, finished, updated = build
    stamp = updated or finished
    return f"{pk}-{stamp.timestamp():.6f}" if stamp else str(pk)


@dataclass(frozen=True)
class MatrixSummary:
    models: int
    models_without_runtime: int
    models_invalid: int
    isvcs: int
    isvcs_at_risk: int
    lint: dict[str, int]

    @property
    def lint_total(self) -> int:
        return sum(self.lint.values())


def matrix_summary(cluster: Cluster, build: MatrixBuild, namespace: str) -> MatrixSummary:
    """The counts at the top of the matrix: models of the namespace with no runtime (or invalid),
    InferenceServices at risk in the cluster, lint findings by severity."""
    outcomes = Counter(
        MatrixRow.objects.filter(build=build, namespace=namespace).values_list("outcome", flat=True).iterator()
    )
    verdicts = isvc_verdicts(cluster)
    return MatrixSummary(
        models=sum(outcomes.values()),
        models_without_runtime=outcomes.get(MatrixRow.Outcome.NO_RUNTIME.value, 0),
        models_invalid=outcomes.get(MatrixRow.Outcome.INVALID.value, 0),
        isvcs=len(verdicts),
        isvcs_at_risk=sum(1 for verdict in verdicts if isvc_at_risk(verdict)),
        lint=lint_report_get(cluster).counts(),
    )


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


def model_rows(build: MatrixBuild, model: Resource) -> list[MatrixRow]:
    return list(MatrixRow.objects.filter(build=build, model=model).select_related("selected").order_by("namespace"))


def pipeline_plan(model: Resource, runtime: Resource) -> matching.PatchPlan:
    """What `matching.pipeline_patch` plans for a stored model and runtime: the smallest
    `{"spec": {"diffusionPipeline": ...}}` merge patch (or None), the entry it targets, and why
    no patch can help (`blocked`). ManifestError when either stored object is malformed."""
    return matching.pipeline_patch(model.obj, runtime.obj)


def _patchable(inventory: Inventory, model_key: ObjectKey, runtime: Resource) -> bool:
    """Whether a diffusionPipeline patch can make the model pass the runtime: only entries that
    require a pipeline can be satisfied by one."""
    return runtime.has_pipeline and bool(pipeline_fixable(inventory, [(model_key, runtime.key)]))


def model_ranking(cluster: Cluster, row: MatrixRow | None, model: Resource, namespace: str) -> ModelRanking:
    """The runtimes of a model's row in one namespace: ranked as OME ranks them (first = OME's
    pick), manual-only with why, and every other runtime in scope with OME's reason."""
    if row is None:
        return ModelRanking(namespace=namespace, row=None, ranked=[], manual=[], excluded=[])
    inventory = load_inventory(cluster)
    scope = list(runtimes_in_scope(cluster, namespace).defer("obj"))
    by_key = {runtime.key: runtime for runtime in scope}
    ranked = [
        RankedRuntime(
            by_key[key], CellStatus.SELECTED.value if rank == 0 else CellStatus.COMPATIBLE.value, score, entry
        )
        for rank, (kind, ns, name, score, entry) in enumerate(row.compatible)
        if (key := (str(kind), str(ns), str(name))) in by_key
    ]
    manual = [
        RankedRuntime(by_key[key], CellStatus.MANUAL_ONLY.value, reason=reason)
        for kind, ns, name, reason in row.manual
        if (key := (kind, ns, name)) in by_key
    ]
    listed = set(row_statuses(row.compatible, row.manual))
    excluded = [
        RankedRuntime(
            runtime,
            CellStatus.DISABLED.value if runtime.disabled else CellStatus.EXCLUDED.value,
            reason=_reason(inventory, model.key, runtime.key, namespace),
            patchable=_patchable(inventory, model.key, runtime),
        )
        for runtime in scope
        if runtime.key not in listed
    ]
    excluded.sort(key=lambda item: (not item.patchable, item.status, item.runtime.name))
    return ModelRanking(namespace=namespace, row=row, ranked=ranked, manual=manual, excluded=excluded)


def model_history(cluster: Cluster, model: Resource, limit: int = 100) -> list[CellChange]:
    return list(
        CellChange.objects.filter(
            cluster=cluster, model_kind=model.kind, model_namespace=model.namespace, model_name=model.name
        )[:limit]
    )


def model_isvcs(cluster: Cluster, model: Resource) -> list[IsvcVerdict]:
    """The InferenceServices that resolve to the model, with today's verdict."""
    return [verdict for verdict in isvc_verdicts(cluster) if verdict.model == model.key]


@dataclass(frozen=True)
class EntryMatches:
    """One entry of a runtime, and the models it is the first passing entry for."""

    index: int
    entry: Any
    models: list[Resource]


def runtime_matches(cluster: Cluster, runtime: Resource) -> tuple[list[EntryMatches], set[int]]:
    """Per entry of the runtime, the models it matches (OME uses a runtime's first passing
    entry); and the ids of the models whose OME pick it is in some namespace."""
    inventory = load_inventory(cluster)
    parsed = inventory.runtimes.get(runtime.key)
    if parsed is None:
        return [], set()
    matched: dict[int, list[int]] = {index: [] for index in range(len(parsed.entries))}
    for model_key in inventory.models:
        entry = inventory.grid.compatible_entries(model_key).get(runtime.key)
        if entry is not None:
            matched[entry].append(inventory.ids[model_key])
    ids = [model_id for found in matched.values() for model_id in found]
    models = {model.pk: model for model in Resource.objects.filter(pk__in=ids).defer("obj")}
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
        else set(MatrixRow.objects.filter(build=build, selected=runtime).values_list("model_id", flat=True))
    )
    return entries, picked


def parsed_object(cluster: Cluster, resource: Resource) -> Model | Runtime | None:
    """The stored model or runtime as `matching` reads it; None when it cannot be parsed."""
    inventory = load_inventory(cluster)
    return inventory.models.get(resource.key) or inventory.runtimes.get(resource.key)
