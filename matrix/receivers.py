"""Inventory changes ask for a (coalesced) matrix update, after their transaction commits. What
follows a matrix update is each follower's own receiver of matrix.signals.matrix_updated."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.dispatch import receiver

from inventory.signals import inventory_changed

logger = logging.getLogger(__name__)


@receiver(inventory_changed)
def update_matrix(sender: object, cluster_id: int, changes: list[Any], **kwargs: Any) -> None:
    """Ask for the update (matrix.pending). With the broker down the change is already
    committed: say so and go on; the periodic catch-up finds the rows it left stale."""
    if not settings.MATRIX_UPDATE_ON_CHANGE:
        return
    from .tasks import BROKER_ERRORS, matrix_update_request

    try:
        matrix_update_request(cluster_id, [change.to_dict() for change in changes])
    except BROKER_ERRORS as error:
        logger.warning("cluster %s: matrix update not queued (%s); the catch-up will apply it", cluster_id, error)
