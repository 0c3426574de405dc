"""Every matrix update asks for a policy evaluation of its cluster, after it commits, in its
own task: evaluating never holds up the update, and a broker outage only delays it. Without an
enabled policy or a receiver of pick changes there is nothing to evaluate, and no task."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django.dispatch import receiver

from core.broker import BROKER_ERRORS
from matrix.signals import matrix_updated

from .models import Policy, Receiver

logger = logging.getLogger(__name__)


def _anything_to_evaluate() -> bool:
    return (
        Policy.objects.filter(enabled=True).exists()
        or Receiver.objects.filter(enabled=True, on_pick_change=True).exists()
    )


@receiver(matrix_updated)
def evaluate_policies(sender: object, cluster_id: int, causes: list[dict[str, Any]], **kwargs: Any) -> None:
    if not settings.POLICY_EVALUATE_ON_UPDATE or not _anything_to_evaluate():
        return
    from .tasks import policies_evaluate_task

    def enqueue() -> None:
        try:
            policies_evaluate_task.delay(cluster_id, causes)
        except BROKER_ERRORS as error:
            logger.warning("cluster %s: policy evaluation not queued (%s)", cluster_id, error)

    transaction.on_commit(enqueue)
