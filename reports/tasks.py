"""The thin task that writes a cluster's reports after a matrix update (on the `matrix`
queue, behind the update it follows)."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from access.restrict import Action
from access.scope import SYSTEM
from inventory import kube
from inventory.models import Cluster

from .services import reports_write

logger = logging.getLogger(__name__)


@shared_task(name="reports.reports_write")
def reports_write_task(cluster_id: int) -> dict[str, Any] | None:
    cluster = Cluster.objects.restrict(SYSTEM, Action.VIEW).filter(pk=cluster_id).first()
    if cluster is None:
        return None
    try:
        outcome = reports_write(cluster)
    except kube.KubeError as error:
        # The next matrix update writes them again; nothing here is lost.
        logger.warning("cluster %s: reports not written (%s)", cluster.name, error.message)
        return {"error": error.message}
    for refused in outcome.refused:
        logger.warning("cluster %s: %s", cluster.name, refused)
    return outcome.to_dict()
