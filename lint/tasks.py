"""Thin Celery task: prove a cluster's lint fixes (lint.proving), on the `matrix` queue
(CELERY_TASK_ROUTES), after the matrix update that asked for it."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from inventory.models import Cluster

from .proving import lint_proofs_refresh


@shared_task(name="lint.lint_prove")
def lint_prove_task(cluster_id: int) -> dict[str, Any] | None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    proofs = None if cluster is None else lint_proofs_refresh(cluster)
    return None if proofs is None else {"fingerprint": proofs.fingerprint, "seconds": proofs.seconds}
