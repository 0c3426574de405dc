"""Inventory changes enqueue an incremental matrix update, after their transaction commits."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.dispatch import receiver

from inventory.signals import inventory_changed


@receiver(inventory_changed)
def update_matrix(sender: object, cluster_id: int, changes: list[Any], **kwargs: Any) -> None:
    if not settings.MATRIX_UPDATE_ON_CHANGE:
        return
    from .tasks import matrix_apply_changes_task

    matrix_apply_changes_task.delay(cluster_id, [change.to_dict() for change in changes])
