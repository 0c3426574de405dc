"""resourceVersions, and the SyncState row that stores the one the inventory reflects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..models import Cluster, SyncState


def rv_order(left: str, right: str) -> int | None:
    """-1, 0 or 1 comparing two resourceVersions; None when their order is unknown.

    resourceVersions are opaque by contract, but every etcd-backed API server hands out etcd
    revisions, which are increasing integers; anything else (or an empty value) is unordered.
    """
    if not (left.isdigit() and right.isdigit()):
        return None
    a, b = int(left), int(right)
    return (a > b) - (a < b)


def object_rv(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    return str(metadata.get("resourceVersion") or "") if isinstance(metadata, Mapping) else ""


def locked_state(cluster: Cluster, kind: str) -> SyncState:
    """The kind's SyncState, locked until the surrounding transaction ends."""
    state, _ = SyncState.objects.select_for_update().get_or_create(cluster=cluster, kind=kind)
    return state
