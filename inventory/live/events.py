"""Storing one watch event, unless the stored inventory already reflects it."""

from __future__ import annotations

from typing import Any

from django.db import DataError, transaction
from django.utils import timezone

from core.redact import redact

from .. import records
from ..models import Cluster, SyncState
from ..sync import REJECTED_KEPT, event_apply
from .state import locked_state, object_rv, rv_order


def watch_event_apply(cluster: Cluster, kind: str, event_type: str, obj: dict[str, Any]) -> bool:
    """Store one watch event of `kind` and advance the stored resourceVersion to it.

    Returns False when the stored inventory already reflects the event (its resourceVersion is
    not newer than the stored one), so it was skipped. BOOKMARKs only advance the resourceVersion.
    """
    resource_version = object_rv(obj)
    try:
        with transaction.atomic():
            state = locked_state(cluster, kind)
            order = rv_order(resource_version, state.resource_version)
            if order is not None and order <= 0:
                return False
            if event_type == "BOOKMARK":
                state.resource_version = resource_version
                state.save(update_fields=["resource_version"])
                return True
            if event_type != "DELETED" and records.identity(obj) is None:
                _reject(state, records.unusable(obj, kind))
            else:
                event_apply(cluster, event_type, obj)
            state.resource_version = resource_version or state.resource_version
            state.last_event_at = timezone.now()
            state.save(update_fields=["resource_version", "last_event_at", "rejected"])
    except DataError as error:
        # A value records.columns did not foresee: the event is recorded and skipped, not
        # retried forever (a lost connection is an OperationalError and is retried).
        with transaction.atomic():
            state = locked_state(cluster, kind)
            _reject(state, f"{kind} event at {resource_version} could not be stored: {error}"[:500])
            state.resource_version = resource_version or state.resource_version
            state.save(update_fields=["resource_version", "rejected"])
    return True


def _reject(state: SyncState, message: str) -> None:
    """Keep the message of an object that could not be stored, with the kind's others."""
    state.rejected = [*state.rejected, redact(message)][-REJECTED_KEPT:]
