"""Keeping a published matrix level with the inventory, right by construction.

Every row is stamped with the cluster's inventory_version read *before* the inventory it was
computed from, so the row reflects at least every change up to that version. A model's rows are
stale once the model has a newer version; every row is stale once a runtime or an
InferenceService has a version newer than the oldest row's, or one was removed (the build's
`scope_digest` names the ids of those objects when all rows were last computed together), or
the OME profile judging the cluster is no longer the one recorded on the build.

`matrix_level` finds the stale rows from these stamps alone (no queued change list, no
fingerprint is trusted), recomputes them and writes them in one transaction under a lock on the
build row, never over a row computed from a newer inventory. So updates can be coalesced, run
twice, run at once or get lost: the next one (or the periodic catch-up) finds what is still
stale. A level that finds nothing stale records the version it checked as `applied_version`.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F, Min, Value
from django.db.models.functions import Greatest, Now

import matching
from core.db import retried_transaction
from inventory.locks import cluster_write_lock
from inventory.models import MODEL_KINDS, Cluster, Resource
from inventory.parsed import Inventory, cluster_state, load_inventory

from .cell_changes import cell_changes, row_statuses
from .models import CellChange, MatrixBuild, MatrixRow
from .rows import RowData, compute_rows

logger = logging.getLogger(__name__)

# A write can meet a model or runtime deleted after the inventory was read (a foreign key);
# the next attempt reads the inventory again.
WRITE_ATTEMPTS = 3


def ome_behaviour_label(behaviour: matching.Behaviour) -> str:
    """The profile a build's verdicts follow, as recorded on the build."""
    return f"OME profile {behaviour.name} ({behaviour.commit[:8]})"


def inventory_version(cluster: Cluster) -> int:
    return int(Cluster.objects.values_list("inventory_version", flat=True).get(pk=cluster.pk))


def scope_digest(cluster: Cluster) -> str:
    """Names the set of runtimes and InferenceServices (their ids): a removal changes it."""
    ids = Resource.objects.filter(cluster=cluster).exclude(kind__in=MODEL_KINDS).order_by("pk").values_list("pk")
    return hashlib.sha256(",".join(str(pk) for (pk,) in ids).encode()).hexdigest()


@dataclass
class Staleness:
    """What of a build is behind the inventory at `version` (read first)."""

    version: int
    digest: str
    behaviour: str = ""
    everything: bool = False
    model_ids: list[int] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)

    @property
    def level(self) -> bool:
        return not self.everything and not self.model_ids


def _changed(resources: Iterable[tuple[str, str, str]], action: str) -> list[dict[str, Any]]:
    return [{"kind": k, "namespace": ns, "name": n, "action": action, "fields": []} for k, ns, n in resources]


def matrix_staleness(cluster: Cluster, build: MatrixBuild) -> Staleness:
    """Compare each row's stamp with the versions of what it depends on."""
    version, judgement = cluster_state(cluster)
    label = ome_behaviour_label(judgement.behaviour)
    stale = Staleness(version=version, digest=scope_digest(cluster), behaviour=label)
    row_versions = dict(
        MatrixRow.objects.filter(build=build)
        .values("model_id")
        .annotate(version=Min("inventory_version"))
        .values_list("model_id", "version")
    )
    models = Resource.objects.filter(cluster=cluster, kind__in=MODEL_KINDS)
    floor = min(row_versions.values(), default=build.applied_version)
    scope_changes = (
        Resource.objects.filter(cluster=cluster, version__gt=floor)
        .exclude(kind__in=MODEL_KINDS)
        .values_list("kind", "namespace", "name")
    )
    stale.changed = _changed(scope_changes[:20], "changed")
    if stale.changed or stale.digest != build.scope_digest or label != build.ome_behaviour:
        stale.everything = True
        stale.model_ids = list(models.values_list("pk", flat=True))
        return stale
    for pk, version, kind, namespace, name in models.values_list("pk", "version", "kind", "namespace", "name"):
        if pk not in row_versions or version > row_versions[pk]:
            stale.model_ids.append(pk)
            if len(stale.changed) < 20:
                stale.changed += _changed([(kind, namespace, name)], "changed" if pk in row_versions else "added")
    return stale


class _BuildReplaced(Exception):
    """The build was replaced (or deleted) between reading it and locking it."""


def _stored_rows(build: MatrixBuild, stale: Staleness, model_ids: list[int]) -> dict[tuple[int, str], MatrixRow]:
    rows = MatrixRow.objects.filter(build=build)
    if not stale.everything:
        rows = rows.filter(model_id__in=model_ids)
    return {(row.model_id, row.namespace): row for row in rows}


@retried_transaction
def write_rows(
    cluster: Cluster,
    build: MatrixBuild,
    stale: Staleness,
    inventory: Inventory,
    fresh: list[RowData],
    cause: list[dict[str, Any]],
) -> int:
    """Replace the rows of the stale models by `fresh`, in one transaction under the build's
    lock, except where a row stamped with a newer version is already stored. Records the cells
    that changed status. Returns the rows written."""
    with transaction.atomic():
        cluster_write_lock(cluster.pk)
        locked = MatrixBuild.objects.select_for_update().filter(pk=build.pk, status=MatrixBuild.Status.SUCCEEDED)
        if not locked.exists():
            raise _BuildReplaced
        newer = set(
            MatrixRow.objects.filter(build=build, inventory_version__gt=stale.version).values_list(
                "model_id", flat=True
            )
        )
        # Under the cluster's lock no model goes away; one deleted since the inventory was read
        # has taken its rows with it, and its own change levels the rest.
        present = set(Resource.objects.filter(cluster=cluster, kind__in=MODEL_KINDS).values_list("pk", flat=True))
        model_ids = [pk for pk in stale.model_ids if pk not in newer and pk in present]
        wanted = set(model_ids)
        # The stale models' rows, and any row of a model the inventory no longer has.
        stored = {
            identity: row
            for identity, row in _stored_rows(build, stale, model_ids).items()
            if identity[0] in wanted or identity[0] not in inventory.keys
        }
        fresh_by_identity = {row.identity: row for row in fresh if row.model_id in wanted}
        old = {identity: RowData.from_row(row) for identity, row in stored.items()}
        written = [row for identity, row in fresh_by_identity.items() if old.get(identity) != row]
        replaced = [stored[row.identity].pk for row in written if row.identity in stored]
        gone = [row.pk for identity, row in stored.items() if identity not in fresh_by_identity]
        MatrixRow.objects.filter(pk__in=replaced + gone).delete()
        MatrixRow.objects.bulk_create(
            [row.as_row(build_id=build.pk, cluster_id=cluster.pk, inventory_version=stale.version) for row in written],
            batch_size=1000,
        )
        MatrixRow.objects.filter(build=build, model_id__in=model_ids, inventory_version__lt=stale.version).update(
            inventory_version=stale.version
        )
        history = cell_changes(cluster, inventory, row_statuses(list(old.values())), row_statuses(written), cause)
        CellChange.objects.bulk_create(history, batch_size=1000)
        updates: dict[str, Any] = {
            "applied_version": Greatest(F("applied_version"), Value(stale.version)),
            "rows_count": MatrixRow.objects.filter(build=build).count(),
            # What the rows now cover, not what the last full build counted.
            "models_count": len(inventory.model_keys),
            "runtimes_count": len(inventory.runtimes),
        }
        if stale.everything:
            updates["scope_digest"] = stale.digest
            updates["ome_behaviour"] = ome_behaviour_label(inventory.behaviour)
        if written or gone:
            updates["updated_at"] = Now()  # the database's clock, as freshness reads it
        MatrixBuild.objects.filter(pk=build.pk).update(**updates)
    return len(written)


def _mark_level(build: MatrixBuild, stale: Staleness) -> None:
    MatrixBuild.objects.filter(pk=build.pk).update(applied_version=Greatest(F("applied_version"), Value(stale.version)))


def matrix_level(cluster: Cluster, build: MatrixBuild, *, cause: list[dict[str, Any]] | None = None) -> int | None:
    """Recompute and store what is stale in `build`; None when nothing was (the matrix is level
    at the version read), else the rows written. `cause` names the changes for the history;
    without it, the changed objects found are named."""
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        stale = matrix_staleness(cluster, build)
        if stale.level:
            _mark_level(build, stale)
            return None
        inventory = load_inventory(cluster)
        keys = [inventory.keys[pk] for pk in stale.model_ids if pk in inventory.keys]
        fresh = compute_rows(inventory, keys)
        try:
            return write_rows(cluster, build, stale, inventory, fresh, cause or stale.changed)
        except _BuildReplaced:
            return None  # the new build's finish levels it
        except IntegrityError as error:
            logger.info("cluster %s: matrix update met a concurrent change (%s); attempt %d", cluster, error, attempt)
    raise RuntimeError(f"cluster {cluster}: the matrix update kept meeting concurrent changes")
