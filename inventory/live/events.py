"""Storing watch events, a batch per transaction, skipping those the inventory already reflects."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import DataError, transaction
from django.utils import timezone

from core.db import retried_transaction
from core.redact import redact

from .. import records
from ..locks import cluster_write_lock
from ..models import Cluster, SyncState
from ..sync import REJECTED_KEPT, Event, events_apply
from .state import locked_state, object_rv, rv_order


@retried_transaction
def watch_events_apply(cluster: Cluster, kind: str, events: Sequence[Event]) -> list[bool]:
    """Store watch events of `kind`, in order and in one transaction, and advance the stored
    resourceVersion to the last. Says for each event whether it was applied: False when the
    stored inventory already reflected it (its resourceVersion is not newer than the stored one).
    BOOKMARKs only advance the resourceVersion.

    An event with a value the database refuses (one records.columns did not foresee) is recorded
    in the kind's `rejected` list and skipped, not retried forever; the others are stored.
    A lost connection is an OperationalError and is raised, so the watch resumes from the state.
    """
    try:
        with transaction.atomic():
            cluster_write_lock(cluster.pk)
            state = locked_state(cluster, kind)
            to_store: list[Event] = []
            applied = [_accept(state, event_type, obj, to_store) for event_type, obj in events]
            events_apply(cluster, to_store)
            state.save(update_fields=["resource_version", "last_event_at", "rejected"])
        return applied
    except DataError as error:
        if len(events) > 1:  # find the one event that cannot be stored
            return [applied for event in events for applied in watch_events_apply(cluster, kind, [event])]
        _skip_unstorable(cluster, kind, object_rv(events[0][1]), error)
        return [True]


def _accept(state: SyncState, event_type: str, obj: dict[str, Any], to_store: list[Event]) -> bool:
    """Whether the event is newer than the stored inventory; if so, advance the kind's
    resourceVersion past it and add it to `to_store` (or record why its object cannot be stored)."""
    resource_version = object_rv(obj)
    order = rv_order(resource_version, state.resource_version)
    if order is not None and order <= 0:
        return False
    if event_type == "BOOKMARK":
        state.resource_version = resource_version
        return True
    if event_type != "DELETED" and records.identity(obj) is None:
        _reject(state, records.unusable(obj, state.kind))
    else:
        to_store.append((event_type, obj))
    state.resource_version = resource_version or state.resource_version
    state.last_event_at = timezone.now()
    return True


def _skip_unstorable(cluster: Cluster, kind: str, resource_version: str, error: DataError) -> None:
    with transaction.atomic():
        cluster_write_lock(cluster.pk)
        state = locked_state(cluster, kind)
        _reject(state, f"{kind} event at {resource_version} could not be stored: {error}"[:500])
        state.resource_version = resource_version or state.resource_version
        state.save(update_fields=["resource_version", "rejected"])


def _reject(state: SyncState, message: str) -> None:
    """Keep the message of an object that could not be stored, with the kind's others."""
    state.rejected = [*state.rejected, redact(message)][-REJECTED_KEPT:]
