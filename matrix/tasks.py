"""Thin Celery tasks over matrix.services, on the `matrix` queue (CELERY_TASK_ROUTES), and the
beat tasks that supervise the matrices, on the short `control` queue. A full rebuild fans out
one task per chunk of models (a chord), so more workers finish it sooner."""

from __future__ import annotations

import contextlib
import logging
from datetime import timedelta
from typing import Any

from celery import chord, shared_task
from django.conf import settings
from redis.exceptions import RedisError

from core.broker import BROKER_ERRORS
from inventory.models import Cluster

from . import audit, pending, services
from .models import MatrixBuild
from .selectors import current_build

logger = logging.getLogger(__name__)


@shared_task(name="matrix.matrix_rebuild")
def matrix_rebuild_task(cluster_id: int) -> dict[str, Any]:
    """Start a build; returns its id and the id of the task that publishes it."""
    build, chunks = services.matrix_build_start(Cluster.objects.get(pk=cluster_id))
    callback = matrix_build_finish_task.si(build.pk).on_error(matrix_build_fail_task.si(build.pk))
    finish = chord(matrix_build_chunk_task.si(build.pk, chunk) for chunk in chunks)(callback)
    return {"build": build.pk, "finish": finish.id}


@shared_task(name="matrix.matrix_build_chunk")
def matrix_build_chunk_task(build_id: int, model_ids: list[int]) -> int:
    return services.matrix_build_chunk(build_id, model_ids)


@shared_task(name="matrix.matrix_build_finish")
def matrix_build_finish_task(build_id: int) -> int:
    return services.matrix_build_finish(build_id).rows_count


@shared_task(name="matrix.matrix_build_fail")
def matrix_build_fail_task(build_id: int) -> None:
    services.matrix_build_fail(build_id, "a chunk of the build failed")


@shared_task(name="matrix.matrix_update")
def matrix_update_task(cluster_id: int) -> int | None:
    """Level one cluster's matrix (the coalesced update of matrix.pending)."""
    try:
        causes = pending.take_pending(cluster_id)
    except RedisError:
        causes = []  # the update levels everything stale anyway; only the history's causes are lost
    try:
        cluster = Cluster.objects.filter(pk=cluster_id).first()
        return None if cluster is None else services.matrix_apply_changes(cluster, causes)
    finally:
        with contextlib.suppress(RedisError):
            pending.update_done(cluster_id)


def matrix_update_request(cluster_id: int, causes: list[dict[str, Any]]) -> bool:
    """Ask for an update of a cluster's matrix; True when this call queued it (the others join
    the update already pending). Raises BROKER_ERRORS when the broker is away."""
    if not pending.mark_pending(cluster_id, causes):
        return False
    try:
        matrix_update_task.apply_async((cluster_id,), countdown=settings.MATRIX_UPDATE_DELAY, ignore_result=True)
    except BROKER_ERRORS:
        pending.clear_pending(cluster_id)
        raise
    return True


def _supervise(cluster: Cluster, abandon_after: timedelta) -> str:
    """One cluster's part of the catch-up; returns what it queued."""
    if services.matrix_builds_abandon(cluster, older_than=abandon_after):
        matrix_rebuild_task.delay(cluster.pk)
        return "rebuild (abandoned build)"
    if current_build(cluster) is None:
        if not MatrixBuild.objects.filter(cluster=cluster, status=MatrixBuild.Status.RUNNING).exists():
            matrix_rebuild_task.delay(cluster.pk)
            return "rebuild (no matrix)"
        return ""
    if not services.matrix_is_level(cluster):
        matrix_update_task.delay(cluster.pk)
        return "update (stale rows)"
    return ""


@shared_task(name="matrix.matrix_catch_up_all")
def matrix_catch_up_all_task() -> dict[str, str]:
    """Beat (control queue): fail abandoned builds and queue their rebuild again, build missing
    matrices, and queue an update for each matrix whose rows' stamps show it behind."""
    abandon_after = timedelta(seconds=settings.MATRIX_BUILD_ABANDON_AFTER)
    queued = {}
    for cluster in Cluster.objects.all():
        if action := _supervise(cluster, abandon_after):
            logger.info("cluster %s: catch-up queued a %s", cluster, action)
            queued[cluster.name] = action
    return queued


@shared_task(name="matrix.matrix_audit_all")
def matrix_audit_all_task() -> dict[str, int]:
    """Beat (control queue): recompute a sample of every matrix and repair what differs."""
    differing = {}
    for cluster in Cluster.objects.all():
        report = audit.matrix_audit(cluster, sample=settings.MATRIX_AUDIT_SAMPLE)
        if report is not None:
            differing[cluster.name] = report.rows_differing
    return differing
