"""Inventory changes enqueue an incremental matrix update, after their transaction commits."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.dispatch import receiver
from kombu.exceptions import OperationalError

from inventory.signals import inventory_changed

logger = logging.getLogger(__name__)


@receiver(inventory_changed)
def update_matrix(sender: object, cluster_id: int, changes: list[Any], **kwargs: Any) -> None:
    """Queue the update. With the broker down the change is already committed: say so and go
    on; the periodic catch-up (matrix.tasks.matrix_catch_up_all) brings the matrix level."""
    if not settings.MATRIX_UPDATE_ON_CHANGE:
        return
    from .tasks import matrix_apply_changes_task

    try:
        matrix_apply_changes_task.apply_async(
            (cluster_id, [change.to_dict() for change in changes]), ignore_result=True
        )
    except (OperationalError, ConnectionError, TimeoutError, RuntimeError) as error:
        logger.warning("cluster %s: matrix update not queued (%s); the catch-up will apply it", cluster_id, error)
