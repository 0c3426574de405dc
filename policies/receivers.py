"""Every matrix update asks for a policy evaluation of its cluster, after it commits, in its
own task: evaluating never holds up the update, and a broker outage only delays it."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django.dispatch import receiver

from matrix.signals import matrix_updated

logger = logging.getLogger(__name__)


@receiver(matrix_updated)
def evaluate_policies(sender: object, cluster_id: int, causes: list[dict[str, Any]], **kwargs: Any) -> None:
    if not settings.POLICY_EVALUATE_ON_UPDATE:
        return
    from .tasks import BROKER_ERRORS, policies_evaluate_task

    def enqueue() -> None:
        try:
            policies_evaluate_task.delay(cluster_id, causes)
        except BROKER_ERRORS as error:
            logger.warning("cluster %s: policy evaluation not queued (%s)", cluster_id, error)

    transaction.on_commit(enqueue)
