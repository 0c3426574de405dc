"""Thin Celery tasks over matrix.services. A full rebuild fans out one task per chunk of
models (a chord), so more workers finish it sooner; one worker still does it all."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from celery import chord, shared_task
from django.conf import settings

from inventory.models import Cluster

from . import services
from .selectors import current_build


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


@shared_task(name="matrix.matrix_apply_changes")
def matrix_apply_changes_task(cluster_id: int, changes: list[dict[str, Any]]) -> int:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    return 0 if cluster is None else services.matrix_apply_changes(cluster, changes)


@shared_task(name="matrix.matrix_catch_up_all")
def matrix_catch_up_all_task() -> int:
    """Beat: fail abandoned builds, then level every matrix whose update was lost."""
    caught_up = 0
    abandon_after = timedelta(seconds=2 * settings.CELERY_TASK_TIME_LIMIT)
    for cluster in Cluster.objects.all():
        services.matrix_builds_abandon(cluster, older_than=abandon_after)
        if current_build(cluster) is None:
            matrix_rebuild_task.delay(cluster.pk)
        elif services.matrix_catch_up(cluster) is not None:
            caught_up += 1
    return caught_up
