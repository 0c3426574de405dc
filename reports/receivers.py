"""Each matrix update of a cluster that opted in (`Cluster.policy_reports`) queues the writing
of its reports, after the update commits: the cluster is written from a worker, never from a
request, and a broker outage only delays it."""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.dispatch import receiver

from core.broker import BROKER_ERRORS
from inventory.models import Cluster
from matrix.signals import matrix_updated

logger = logging.getLogger(__name__)


@receiver(matrix_updated)
def write_reports(sender: object, cluster: Cluster, cluster_id: int, **kwargs: Any) -> None:
    if not (cluster.policy_reports and cluster.is_live):
        return
    from .tasks import reports_write_task

    def enqueue() -> None:
        try:
            reports_write_task.delay(cluster_id)
        except BROKER_ERRORS as error:
            logger.warning("cluster %s: reports not queued (%s)", cluster_id, error)

    transaction.on_commit(enqueue)
