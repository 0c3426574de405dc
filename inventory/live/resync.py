"""Full resyncs: list a kind and make the stored objects equal to the list."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError, transaction

from core.db import retried_transaction

from .. import kube, records
from ..kube import KubeError, KubeUnavailable
from ..locks import cluster_write_lock
from ..models import Cluster, Kind
from ..ome_release import ome_release_refresh
from ..services import manifests_load
from ..sync import ApplyResult, ObjectKey, record_error, record_list, snapshot_apply
from .state import locked_state, rv_order

logger = logging.getLogger(__name__)

# A list older than what a running watch has already applied is retried this many times in all;
# the last attempt is applied anyway, so an API server whose numbering restarted cannot wedge us.
RESYNC_ATTEMPTS = 3


@dataclass
class ResyncResult:
    """What a resync changed, and the error of each kind that failed."""

    applied: ApplyResult = field(default_factory=ApplyResult)
    errors: dict[str, KubeError] = field(default_factory=dict)
    manifest_errors: list[str] = field(default_factory=list)

    def transient_error(self) -> KubeUnavailable | None:
        """The first error worth retrying soon (server down or 5xx), if any kind had one."""
        return next((e for e in self.errors.values() if isinstance(e, KubeUnavailable)), None)


def _keyed(kind: str, items: Iterable[dict[str, Any]]) -> tuple[dict[ObjectKey, dict[str, Any]], list[str]]:
    """The listed objects by key, and why each one without a usable key was left out."""
    objects, rejected = {}, []
    for obj in items:
        key = records.identity(obj)
        if key is None or key[0] != kind:
            # Without a usable name the object cannot be stored, not even as an error.
            rejected.append(records.unusable(obj, kind))
            logger.warning("list of %s: skipped %s", kind, rejected[-1])
            continue
        objects[key] = obj
    return objects, rejected


def kind_resync(cluster: Cluster, kind: str, *, api: Any, result: ApplyResult | None = None) -> str:
    """List one kind and make the stored objects equal to the list, removing the others.

    Records the list in SyncState and returns its resourceVersion. Raises KubeError.
    """
    for attempt in range(1, RESYNC_ATTEMPTS + 1):
        items, resource_version = kube.list_kind(api, kind)
        if kind_list_store(cluster, kind, items, resource_version, last=attempt == RESYNC_ATTEMPTS, result=result):
            return resource_version
    raise AssertionError("unreachable")  # pragma: no cover


def kind_list_store(
    cluster: Cluster,
    kind: str,
    items: Iterable[dict[str, Any]],
    resource_version: str,
    *,
    last: bool,
    result: ApplyResult | None = None,
) -> bool:
    """Store one list of a kind (see kind_resync); False when it is older than what a watch has
    applied meanwhile and should be listed again (never when it is the `last` attempt)."""
    objects, rejected = _keyed(kind, items)
    stored = _list_store(cluster, kind, objects, rejected, resource_version, last=last)
    if stored is None:
        return False
    if result is not None:  # counted once the transaction committed, not once per attempt
        result.add(stored)
    logger.info("cluster %s %s: listed %d objects at %s", cluster, kind, len(objects), resource_version)
    return True


@retried_transaction
def _list_store(
    cluster: Cluster,
    kind: str,
    objects: dict[ObjectKey, dict[str, Any]],
    rejected: list[str],
    resource_version: str,
    *,
    last: bool,
) -> ApplyResult | None:
    attempt = ApplyResult()
    with transaction.atomic():
        cluster_write_lock(cluster.pk)
        state = locked_state(cluster, kind)
        if not last and rv_order(state.resource_version, resource_version) == 1:
            # A watch applied events newer than this list while it was read; storing the list
            # now would undo them. A fresh list is at least as new.
            logger.info(
                "cluster %s %s: list at %s is older than the stored %s; listing again",
                cluster,
                kind,
                resource_version,
                state.resource_version,
            )
            return None
        snapshot_apply(cluster, kind, objects, prune=True, result=attempt)
        record_list(cluster, kind, resource_version=resource_version, rejected=rejected)
    return attempt


def cluster_resync(cluster: Cluster, *, kinds: Sequence[str] | None = None) -> ResyncResult:
    """A full resync: list every kind (or `kinds`) and store it, pruning what is gone.

    A kind that fails gets its error recorded in SyncState; the other kinds go on. A manifest
    cluster (a snapshot source's) reloads its files instead.
    """
    kinds = list(kinds or Kind.values)
    result = ResyncResult()
    if not cluster.is_live:
        paths = cluster.registered_source.snapshot_paths(cluster)
        result.applied, snapshot = manifests_load(cluster, paths, prune=True)
        result.manifest_errors = snapshot.errors
        return result
    try:
        api = kube.client_for(cluster)
    except KubeError as error:
        record_error(cluster, kinds, error.message)
        result.errors = dict.fromkeys(kinds, error)
        return result
    try:
        for index, kind in enumerate(kinds):
            try:
                kind_resync(cluster, kind, api=api, result=result.applied)
            except KubeError as error:
                failed = kinds[index:] if error.cluster_wide else [kind]
                logger.warning("cluster %s %s: resync failed: %s", cluster, ", ".join(failed), error.message)
                record_error(cluster, failed, error.message)
                result.errors.update(dict.fromkeys(failed, error))
                if error.cluster_wide:
                    break
            except DatabaseError as error:
                # Should records.columns miss a value the database refuses, that kind fails alone.
                logger.exception("cluster %s %s: the list could not be stored", cluster, kind)
                record_error(cluster, [kind], f"the list could not be stored: {type(error).__name__}: {error}"[:2000])
        if not any(error.cluster_wide for error in result.errors.values()):
            ome_release_refresh(cluster, api)
    finally:
        kube.close(api)
    return result
