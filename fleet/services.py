"""The fleet: every cluster the reader may read, side by side. For each model (by kind,
namespace and name) OME's pick and score in each cluster and namespace, rows where clusters
disagree first, with the reason; each cluster's counts; each runtime's reach.

Each cluster's picks are read from its current matrix build once per build generation and
inventory version (a per-process cache); counts come from the same selectors the matrix, lint
and InferenceServices pages use, so a reader's scope applies to them as there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from django.db import connection
from django.utils import timezone

import matching
from access.scope import Scope
from core.cache import VersionedCache
from inventory.models import Cluster
from inventory.parsed import load_inventory
from inventory.selectors import cluster_list
from isvcs.services import isvc_at_risk, isvc_verdicts
from lint.selectors import lint_report_get
from matching import Model, ObjectKey, Runtime, fold_everywhere, key_dict
from matrix.counts import ACROSS, ModelCounts, model_counts
from matrix.freshness import Freshness, cluster_freshness
from matrix.models import MatrixBuild, MatrixRow
from matrix.selectors import current_build, rows_visible
from matrix.updates import ome_behaviour_label

from .compare import difference_reasons, runtime_signature

Cell = tuple[ObjectKey | None, int | None, str]
"""OME's pick (None when none), its score, and the row's outcome (selected | no-runtime | invalid)."""
RowKey = tuple[ObjectKey, str]
"""(model key, namespace)."""


@dataclass(frozen=True)
class ClusterData:
    """One cluster's picks from its current build, and its parsed objects."""

    cluster: Cluster
    build: MatrixBuild | None
    cells: dict[RowKey, Cell]
    models: Mapping[ObjectKey, Model]
    runtimes: Mapping[ObjectKey, Runtime]
    invalid: Mapping[ObjectKey, str]
    version: tuple[object, ...]

    @property
    def name(self) -> str:
        return self.cluster.name

    @property
    def behaviour(self) -> str:
        return self.build.ome_behaviour if self.build is not None else "no matrix"


_DATA: VersionedCache[tuple[object, ...], ClusterData] = VersionedCache("fleet_clusters")

_ROW_FIELDS = (
    "model__kind",
    "model__namespace",
    "model__name",
    "namespace",
    "outcome",
    "selected__kind",
    "selected__namespace",
    "selected__name",
    "selected_score",
)


def _cells(build: MatrixBuild) -> dict[RowKey, Cell]:
    cells: dict[RowKey, Cell] = {}
    rows = MatrixRow.objects.filter(build=build).values_list(*_ROW_FIELDS)
    for kind, ns, name, namespace, outcome, pick_kind, pick_ns, pick_name, score in rows.iterator(chunk_size=5000):
        pick = (pick_kind, pick_ns, pick_name) if pick_name is not None else None
        cells[((kind, ns, name), namespace)] = (pick, score, outcome)
    return cells


def cluster_data(cluster: Cluster) -> ClusterData:
    """The cluster's picks and objects, read once per build generation and inventory version
    (not cached inside a transaction, which a rollback may undo: as `load_inventory`)."""
    build = current_build(cluster)
    inventory = load_inventory(cluster)
    version = (None if build is None else build.generation, inventory.fingerprint)

    def make(_stale: object) -> ClusterData:
        cells = {} if build is None else _cells(build)
        return ClusterData(cluster, build, cells, inventory.models, inventory.runtimes, inventory.invalid, version)

    if connection.in_atomic_block:
        return make(None)
    return _DATA.get((cluster.pk, cluster.created_at), version, make)


# --------------------------------------------------------------------------------------------
# Counts per cluster


@dataclass(frozen=True)
class ClusterCounts:
    """One cluster's column head: its models across the cluster and those OME gives no runtime
    (`matrix.counts`), InferenceServices at risk, lint findings, the sync, and how current all
    that is (matrix.freshness, as on every other surface)."""

    name: str
    source: str
    behaviour: str
    built_at: datetime | None
    models: ModelCounts
    isvcs: int
    isvcs_at_risk: int
    lint: dict[str, int]
    sync_state: str
    synced_at: datetime | None
    freshness: Freshness
    sync_errors: list[str] = field(default_factory=list)

    @property
    def lint_total(self) -> int:
        return sum(self.lint.values())

    @property
    def lint_text(self) -> str:
        return ", ".join(f"{count} {severity}" for severity, count in self.lint.items() if count)

    @property
    def sync_age_seconds(self) -> int | None:
        return None if self.synced_at is None else max(0, int((timezone.now() - self.synced_at).total_seconds()))

    def to_dict(self) -> dict[str, object]:
        return {
            "cluster": self.name,
            "source": self.source,
            "ome_behaviour": self.behaviour,
            "built_at": self.built_at.isoformat() if self.built_at else None,
            "models": self.models.models,
            "models_where": self.models.where,
            "models_without_runtime": self.models.without_runtime,
            "models_no_match": self.models.no_match,
            "models_manual_only": self.models.manual_only,
            "models_invalid": self.models.invalid,
            "isvcs": self.isvcs,
            "isvcs_at_risk": self.isvcs_at_risk,
            "lint": self.lint,
            "lint_total": self.lint_total,
            "sync": {
                "state": self.sync_state,
                "synced_at": self.synced_at.isoformat() if self.synced_at else None,
                "age_seconds": self.sync_age_seconds,
                "errors": self.sync_errors,
            },
            "freshness": self.freshness.to_dict(),
        }


def _sync(cluster: Cluster) -> tuple[str, datetime | None, list[str]]:
    """(state, when the data was last known current, errors): `error` when a kind reports an
    error, `never` when a kind was never listed, `watching` when every watch of a live cluster
    is connected, else `listed`. The time is the oldest of the kinds' newest list or event."""
    states = list(getattr(cluster, "sync_by_kind", None) or cluster.sync_states.order_by("kind"))
    errors = [f"{state.kind}: {state.last_error}" for state in states if state.last_error]
    newest = [max(t for t in (state.last_list_at, state.last_event_at) if t) for state in states if state.last_list_at]
    synced_at = min(newest) if newest and len(newest) == len(states) else None
    if errors:
        return "error", synced_at, errors
    if not states or synced_at is None:
        return "never", None, []
    if cluster.is_live and all(state.watch_live for state in states):
        return "watching", synced_at, []
    return "listed", synced_at, []


def cluster_counts(data: ClusterData, *, scope: Scope) -> ClusterCounts:
    """Whole-cluster counts, read with the reader's scope, which reads the cluster whole (as
    fleet_get keeps only such clusters); LookupError for another."""
    if not scope.reads_whole(data.name):
        raise LookupError(f"cluster {data.name}: its counts are for readers of the whole cluster")
    verdicts = isvc_verdicts(data.cluster, scope=scope)
    models = (
        model_counts(rows_visible(scope).filter(build=data.build), ACROSS)
        if data.build is not None
        else ModelCounts(ACROSS, models=0, no_match=0, manual_only=0, invalid=0)
    )
    state, synced_at, errors = _sync(data.cluster)
    return ClusterCounts(
        name=data.name,
        source=data.cluster.source,
        behaviour=data.behaviour,
        built_at=None if data.build is None else data.build.updated_at or data.build.finished_at,
        models=models,
        isvcs=len(verdicts),
        isvcs_at_risk=sum(1 for verdict in verdicts if isvc_at_risk(verdict)),
        lint=lint_report_get(data.cluster, scope=scope).counts(),
        sync_state=state,
        synced_at=synced_at,
        freshness=cluster_freshness(Cluster.objects.get(pk=data.cluster.pk)),  # read now, not as cached
        sync_errors=errors,
    )


# --------------------------------------------------------------------------------------------
# Rows and reach


@dataclass(frozen=True)
class FleetRow:
    """One model in one namespace across the clusters (None where a cluster has no such row).
    `everywhere`: a cluster-scoped model whose rows say the same in every namespace of every
    cluster, shown once (`namespace` is then its cluster scope)."""

    model: ObjectKey
    namespace: str
    cells: dict[str, Cell | None]
    everywhere: bool = False

    @cached_property
    def disagree(self) -> bool:
        return len({cell for cell in self.cells.values() if cell is not None}) > 1

    @property
    def picks(self) -> list[ObjectKey]:
        return sorted({cell[0] for cell in self.cells.values() if cell is not None and cell[0] is not None})


@dataclass(frozen=True)
class Reach:
    """Where a runtime is OME's pick: in which clusters, and for how many models in each."""

    runtime: ObjectKey
    models: dict[str, int]
    differs: bool

    @property
    def clusters(self) -> int:
        return len(self.models)

    @property
    def total(self) -> int:
        return sum(self.models.values())


@dataclass(frozen=True)
class Fleet:
    clusters: list[ClusterData]
    rows: list[FleetRow]
    reach: list[Reach]
    differing: set[ObjectKey]

    def reasons(self, row: FleetRow) -> list[str]:
        return row_reasons(row, self.clusters, self.differing)

    @cached_property
    def disagreeing(self) -> int:
        return sum(1 for row in self.rows if row.disagree)


def fleet_rows(data: Sequence[ClusterData]) -> list[FleetRow]:
    """Every (model, namespace) of any cluster; disagreeing rows first, then by model name."""
    keys: set[RowKey] = set()
    for item in data:
        keys.update(item.cells)
    rows = _folded([FleetRow(key[0], key[1], {item.name: item.cells.get(key) for item in data}) for key in keys])
    rows.sort(key=lambda row: (not row.disagree, row.model[2], row.model, row.namespace))
    return rows


def _folded(rows: list[FleetRow]) -> list[FleetRow]:
    """A cluster-scoped model's rows that are the same in every namespace of every cluster
    become one (`matching.fold_everywhere`)."""
    folded = fold_everywhere(rows, model=lambda row: row.model, same=lambda row: tuple(sorted(row.cells.items())))
    return [FleetRow(row.model, "", row.cells, everywhere=True) if once else row for row, once in folded]


def runtime_reach(data: Sequence[ClusterData], differing: set[ObjectKey]) -> list[Reach]:
    """Each runtime that is a pick anywhere: by clusters, then models, most first. `differs`:
    some clusters lack it or define it differently (`differing_runtimes`)."""
    picked: dict[ObjectKey, dict[str, set[ObjectKey]]] = {}
    for item in data:
        for (model, _namespace), (pick, _score, _outcome) in item.cells.items():
            if pick is not None:
                picked.setdefault(pick, {}).setdefault(item.name, set()).add(model)
    found = []
    for runtime, by_cluster in picked.items():
        models = {name: len(keys) for name, keys in sorted(by_cluster.items())}
        found.append(Reach(runtime, models, runtime in differing))
    found.sort(key=lambda reach: (-reach.clusters, -reach.total, reach.runtime[2], reach.runtime))
    return found


def differing_runtimes(data: Sequence[ClusterData]) -> set[ObjectKey]:
    """Runtimes that some clusters lack or define differently (creation time aside)."""
    keys = {key for item in data for key in item.runtimes}
    found = set()
    for key in keys:
        signatures = {runtime_signature(item.runtimes[key]) if key in item.runtimes else None for item in data}
        if len(signatures) > 1:
            found.add(key)
    return found


def row_reasons(row: FleetRow, data: Sequence[ClusterData], differing: set[ObjectKey]) -> list[str]:
    """Why the clusters that have the row pick differently (see fleet.compare); `differing`:
    `differing_runtimes(data)`, computed once for all rows."""
    present = [item for item in data if row.cells.get(item.name) is not None]
    picks = row.picks
    others = sorted(
        key for key in differing if (key[0] == "ClusterServingRuntime" or key[1] == row.namespace) and key not in picks
    )
    return difference_reasons(
        behaviours={item.name: item.behaviour for item in present},
        behaviour_changes=_behaviour_changes_row(row, present),
        models={item.name: item.models.get(row.model) for item in present},
        invalid={item.name: item.invalid[row.model] for item in present if row.model in item.invalid},
        picks=picks,
        runtimes=lambda key: {item.name: item.runtimes.get(key) for item in present},
        others=others,
    )


def _behaviour_changes_row(row: FleetRow, present: Sequence[ClusterData]) -> bool:
    """Whether the upgrade diff between the clusters' OME profiles changes this row: in some
    cluster, the same objects judged by another cluster's profile give another pick."""
    labels = {ome_behaviour_label(profile): profile for profile in matching.BEHAVIOURS.values()}
    profiles = {labels[item.behaviour] for item in present if item.behaviour in labels}
    if len(profiles) < 2:
        return False
    for item in present:
        model = item.models.get(row.model)
        if model is None:
            continue
        picks = {_pick_under(model, item, row.namespace, profile) for profile in profiles}
        if len(picks) > 1:
            return True
    return False


def _pick_under(model: Model, item: ClusterData, namespace: str, profile: matching.Behaviour) -> ObjectKey | None:
    found = matching.select(model, item.runtimes.values(), namespace=namespace, behaviour=profile)
    return found.compatible[0].key if found.compatible else None


# The clusters' ids -> their fleet while no cluster's data changes (one entry per set of
# clusters that readers see: readers with other scopes see other sets).
_FLEETS: VersionedCache[tuple[object, ...], Fleet] = VersionedCache("fleets")


def fleet_get(*, scope: Scope, clusters: Iterable[Cluster] | None = None) -> Fleet:
    """The fleet of the given clusters, by default every cluster the reader may read; only
    clusters the reader reads whole take part (a cluster's row and counts cover every namespace)."""
    chosen = cluster_list(scope) if clusters is None else clusters
    data = [cluster_data(cluster) for cluster in chosen if scope.reads_whole(cluster.name)]

    def make(_stale: object) -> Fleet:
        differing = differing_runtimes(data)
        return Fleet(data, fleet_rows(data), runtime_reach(data, differing), differing)

    if connection.in_atomic_block:
        return make(None)
    return _FLEETS.get(tuple(item.cluster.pk for item in data), tuple(item.version for item in data), make)


def rows_matching(rows: Sequence[FleetRow], *, text: str = "", disagree_only: bool = False) -> list[FleetRow]:
    """The rows whose model name contains `text` (any case), only disagreeing ones if asked."""
    needle = text.strip().lower()
    return [row for row in rows if (not disagree_only or row.disagree) and needle in row.model[2].lower()]


def cell_dict(cell: Cell | None) -> dict[str, object] | None:
    if cell is None:
        return None
    pick, score, outcome = cell
    return {"outcome": outcome, "pick": key_dict(pick), "score": score}
