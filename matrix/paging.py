"""Paging the matrix's cells: the cells of some rows of a build as a lazy sequence that counts
and slices without materialising the grid. A CellList works out once what its build generation
fixes (each namespace's runtimes, where the runs of cells start); CELL_LISTS keeps CellLists
for the next request of the same query."""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from django.db.models import QuerySet

from core.cache import VersionedCache
from inventory.models import Resource
from matching import ObjectKey

from .cells import Cell, ScopeKeys, row_cells, row_statuses, runtimes_in_scope, status_counts
from .models import CellStatus, MatrixBuild, MatrixRow


@dataclass
class _Scope:
    """The runtimes of one namespace's cells: keys for counting, objects only to make cells."""

    query: QuerySet[Resource]
    heads: ScopeKeys
    _runtimes: list[Resource] | None = None
    _positions: dict[ObjectKey, int] | None = None

    @property
    def runtimes(self) -> list[Resource]:
        if self._runtimes is None:
            self._runtimes = list(self.query.only("id", "cluster_id", "kind", "namespace", "name", "disabled"))
        return self._runtimes

    def among(self, keys: Iterable[ObjectKey]) -> list[Resource]:
        """The runtimes with these keys, in scope order (keys out of scope are left out)."""
        if self._positions is None:
            self._positions = {runtime.key: number for number, runtime in enumerate(self.runtimes)}
        positions = self._positions
        return [self.runtimes[number] for number in sorted(positions[key] for key in keys if key in positions)]


@dataclass(frozen=True)
class _Layout:
    """Where the runs of a CellList start: `starts[i]` is the first cell of run i (ascending),
    `total` the number of cells. A run is every row of `namespaces[i]` (`per_row[i]` cells
    each, its rows `row_ids[first_row[i]:]` in order) or, with a status filter, the one row
    `row_ids[i]`. Rows are then read by id, never by offset; arrays keep that compact."""

    starts: Sequence[int]
    total: int
    namespaces: Sequence[str] = ()
    per_row: Sequence[int] = ()
    first_row: Sequence[int] = ()
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
    and slicing are arithmetic over per-namespace row counts, rows ordered by ORDER (namespace
    first). With one, each row's count comes from its stored runtime lists (no cells are made for
    the rows before the page), rows in `order`.

    What it works out (the layout, each namespace's runtimes) it keeps, so that a CellList kept
    in CELL_LISTS counts and slices the next page with one query (the page's rows).
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
        order: Sequence[str] = ORDER,
    ) -> None:
        self.build = build
        # Only the columns cells need: SQLite would read through each model's manifest otherwise.
        self.rows = rows.select_related("model").only(*self.COLUMNS)
        self.runtime_ids = None if runtime_ids is None else frozenset(runtime_ids)
        self.statuses = frozenset(statuses)
        if tuple(order) != self.ORDER and not self.statuses:
            raise ValueError("without a status filter a CellList's rows go by namespace first (ORDER)")
        self.order = tuple(order)
        self._layout_memo: _Layout | None = None
        self._scopes: dict[str, _Scope] = {}

    def _scope(self, namespace: str) -> _Scope:
        # Threads sharing a kept CellList may load a scope twice; either is right.
        scope = self._scopes.get(namespace)
        if scope is None:
            query = runtimes_in_scope(self.build.cluster, namespace)
            if self.runtime_ids is not None:
                query = query.filter(pk__in=self.runtime_ids)
            scope = self._scopes[namespace] = _Scope(query=query, heads=ScopeKeys.of(query))
        return scope

    def _cells(self, row: MatrixRow) -> list[Cell]:
        scope = self._scope(row.namespace)
        runtimes = scope.runtimes
        if self.statuses and not self.statuses & {CellStatus.EXCLUDED, CellStatus.DISABLED}:
            # Only runtimes the row lists can have these statuses: make no cells for the others.
            statuses = row_statuses(row.compatible, row.manual)
            runtimes = scope.among(key for key, status in statuses.items() if status in self.statuses)
        cells = row_cells(row, runtimes)
        return [cell for cell in cells if not self.statuses or cell.status in self.statuses]

    def _row_count(self, namespace: str, compatible: list[list[object]], manual: list[list[str]]) -> int:
        """What `len(self._cells(row))` would be, from the row's runtime lists alone."""
        counts = status_counts(row_statuses(compatible, manual), self._scope(namespace).heads)
        return sum(counts[status] for status in self.statuses)

    def _layout(self) -> _Layout:
        if self._layout_memo is None:
            self._layout_memo = self._measure()
        return self._layout_memo

    def _measure(self) -> _Layout:
        starts, total, row_ids = array("q"), 0, array("q")
        if not self.statuses:
            namespaces: list[str] = []
            sizes, first_row = array("q"), array("q")
            for row_id, namespace in self.rows.order_by(*self.ORDER).values_list("pk", "namespace").iterator(2000):
                if not namespaces or namespaces[-1] != namespace:
                    per_row = len(self._scope(namespace).heads.keys)
                    if not per_row:
                        continue
                    starts.append(total)
                    namespaces.append(namespace)
                    sizes.append(per_row)
                    first_row.append(len(row_ids))
                row_ids.append(row_id)
                total += sizes[-1]
            return _Layout(
                starts=starts, total=total, namespaces=namespaces, per_row=sizes, first_row=first_row, row_ids=row_ids
            )
        heads = self.rows.order_by(*self.order).values_list("pk", "namespace", "compatible", "manual")
        for row_id, namespace, compatible, manual in heads.iterator(chunk_size=2000):
            size = self._row_count(namespace, compatible, manual)
            if size:
                starts.append(total)
                row_ids.append(row_id)
                total += size
        return _Layout(starts=starts, total=total, row_ids=row_ids)

    def count(self) -> int:
        return self._layout().total

    def row_ids(self) -> Sequence[int]:
        """The ids of the rows that have cells here, in order."""
        return self._layout().row_ids

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index: slice) -> list[Cell]:
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise TypeError("CellList supports slices without a step only")
        layout = self._layout()
        runs = list(layout.runs(*index.indices(layout.total)[:2]))
        cells: list[Cell] = []
        if not layout.namespaces:
            wanted = [layout.row_ids[run] for run, _first, _last in runs]
            by_id = self._rows_by_id(wanted)
            for row_id, (_run, first, last) in zip(wanted, runs, strict=True):
                row = by_id.get(row_id)
                cells += self._cells(row)[first:last] if row is not None else []
            return cells
        spans = []
        for run, first, last in runs:
            # Every row of the run has a cell per runtime in scope: the i-th cell of the run is
            # row i // per_row, runtime i % per_row. Make only the cells of the slice.
            per_row, offset = layout.per_row[run], layout.first_row[run]
            numbers = range(first // per_row, -(-last // per_row))
            spans.append((run, first, last, [(n, layout.row_ids[offset + n]) for n in numbers]))
        by_id = self._rows_by_id([row_id for *_run, rows in spans for _n, row_id in rows])
        for run, first, last, rows in spans:
            namespace, per_row = layout.namespaces[run], layout.per_row[run]
            runtimes = self._scope(namespace).runtimes
            for number, row_id in rows:
                row = by_id.get(row_id)
                low, high = max(first - number * per_row, 0), min(last - number * per_row, per_row)
                cells += row_cells(row, runtimes[low:high]) if row is not None else []
        return cells

    def _rows_by_id(self, wanted: list[int]) -> dict[int, MatrixRow]:
        # A row replaced by an incremental update since the count is left out: the page runs short.
        # Unordered: the rows are placed by id (ordering would cost compiling a join's ORDER BY).
        return {row.pk: row for row in self.rows.filter(pk__in=wanted).order_by()} if wanted else {}

    def __iter__(self) -> Iterator[Cell]:
        for row in self.rows.order_by(*self.order).iterator(chunk_size=1000):
            yield from self._cells(row)


# Owner: a query as its reader names it (the cells API: the filters' parameters and the reader's
# rights; the matrix page: its rows' SQL); version: the build generation the CellList reads.
CELL_LISTS: VersionedCache[tuple[object, ...], CellList] = VersionedCache("cell_lists")
