"""The cells of the matrix: a row's stored runtime lists read as typed values, each runtime's
status in a row, the runtimes in scope of a namespace, and the counting of cells by status."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from django.db.models import Q, QuerySet

from inventory.models import RUNTIME_KINDS, Cluster, Kind, Resource
from matching import ObjectKey

from .models import CellStatus, MatrixRow

MATCH_STATUSES = frozenset({CellStatus.SELECTED.value, CellStatus.COMPATIBLE.value})


class Ranked(NamedTuple):
    """One item of MatrixRow.compatible: a runtime OME can auto-select, best first."""

    kind: str
    namespace: str
    name: str
    score: int
    entry: int

    @property
    def key(self) -> ObjectKey:
        return (self.kind, self.namespace, self.name)


class Manual(NamedTuple):
    """One item of MatrixRow.manual: a compatible runtime OME selects only when named."""

    kind: str
    namespace: str
    name: str
    reason: str

    @property
    def key(self) -> ObjectKey:
        return (self.kind, self.namespace, self.name)


def ranked_of(compatible: Iterable[Sequence[object]]) -> list[Ranked]:
    """A row's stored `compatible` list, typed."""
    return [
        Ranked(str(kind), str(ns), str(name), score, entry)  # type: ignore[arg-type]
        for kind, ns, name, score, entry in compatible
    ]


def manual_of(manual: Iterable[Sequence[str]]) -> list[Manual]:
    """A row's stored `manual` list, typed."""
    return [Manual(kind, ns, name, reason) for kind, ns, name, reason in manual]


def row_statuses(compatible: Iterable[Sequence[object]], manual: Iterable[Sequence[str]]) -> dict[ObjectKey, str]:
    """Runtime key -> status, for the runtimes of a row that are not simply excluded."""
    found = {item.key: CellStatus.MANUAL_ONLY.value for item in manual_of(manual)}
    for rank, item in enumerate(ranked_of(compatible)):
        found[item.key] = (CellStatus.SELECTED if rank == 0 else CellStatus.COMPATIBLE).value
    return found


def runtimes_in_scope(cluster: Cluster, *namespaces: str) -> QuerySet[Resource]:
    """The runtimes OME considers in the namespaces: their ServingRuntimes and every
    ClusterServingRuntime. Callers name namespaces whose rows they read through `restrict`: their
    runtimes are then readable too (a reader of a namespace reads the cluster-scoped objects)."""
    scope = Q(kind=Kind.CLUSTER_SERVING_RUNTIME)
    named = [namespace for namespace in namespaces if namespace]
    if named:
        scope |= Q(kind=Kind.SERVING_RUNTIME, namespace__in=named)
    runtimes = Resource.objects.filter(cluster=cluster, kind__in=RUNTIME_KINDS)
    return runtimes.filter(scope).order_by("name", "kind")


_HEAD = ("kind", "namespace", "name", "disabled")


@dataclass(frozen=True)
class ScopeKeys:
    """The keys of the runtimes in scope of a namespace, and of those disabled among them."""

    keys: frozenset[ObjectKey]
    disabled: frozenset[ObjectKey]

    @classmethod
    def of(cls, runtimes: QuerySet[Resource]) -> ScopeKeys:
        """Reads only the runtimes' keys and disabled flags."""
        found = [((kind, ns, name), off) for kind, ns, name, off in runtimes.values_list(*_HEAD)]
        return cls(
            keys=frozenset(key for key, _disabled in found),
            disabled=frozenset(key for key, disabled in found if disabled),
        )


def status_counts(statuses: Mapping[ObjectKey, str], scope: ScopeKeys) -> Counter[str]:
    """How many cells of each status a row has among the runtimes of `scope`, from the row's
    `row_statuses` alone: an unlisted runtime is disabled or excluded."""
    counts = Counter(status for key, status in statuses.items() if key in scope.keys)
    counts[CellStatus.DISABLED.value] = sum(1 for key in scope.disabled if key not in statuses)
    counts[CellStatus.EXCLUDED.value] = len(scope.keys) - sum(counts.values())
    return counts


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


OUT_OF_SCOPE = "out-of-scope"
"""The status of a cell whose runtime is a ServingRuntime of another namespace than its row's:
OME never considers it there (a grid of several namespaces shows such cells empty)."""


def in_scope_of(runtime: Resource, namespace: str) -> bool:
    """Whether OME considers the runtime for a model's row in `namespace`."""
    return runtime.kind != Kind.SERVING_RUNTIME or runtime.namespace == namespace


def row_cells(row: MatrixRow, runtimes: Iterable[Resource]) -> Iterator[Cell]:
    """The cells of one row, for the runtimes given (OUT_OF_SCOPE for those not in scope of the
    row's namespace)."""
    statuses = row_statuses(row.compatible, row.manual)
    ranked = {item.key: (rank, item) for rank, item in enumerate(ranked_of(row.compatible))}
    for runtime in runtimes:
        if not in_scope_of(runtime, row.namespace):
            yield Cell(row=row, runtime=runtime, status=OUT_OF_SCOPE, score=None, entry=None, rank=None)
            continue
        status = statuses.get(runtime.key)
        if status is None:
            status = CellStatus.DISABLED.value if runtime.disabled else CellStatus.EXCLUDED.value
        rank, item = ranked.get(runtime.key, (None, None))
        score, entry = (None, None) if item is None else (item.score, item.entry)
        yield Cell(row=row, runtime=runtime, status=status, score=score, entry=entry, rank=rank)
