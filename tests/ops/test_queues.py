"""Queues that cannot starve each other: a burst of inventory changes becomes one pending matrix
update per cluster on the `matrix` queue, supervision tasks go to `control`, watches to `watch`,
and an abandoned build is failed after MATRIX_BUILD_ABANDON_AFTER and rebuilt."""

from __future__ import annotations

import json
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
import redis
from celery import Celery
from django.utils import timezone

from inventory.models import Cluster, Resource
from inventory.sync import event_apply
from matrix.models import MatrixBuild
from matrix.selectors import current_build
from matrix.services import matrix_build_start
from matrix.tasks import matrix_catch_up_all_task, matrix_update_task
from ome_dashboard.celery import app
from tests.ops.conftest import StoppableRedis
from tests.support.celery_worker import running_worker
from tests.support.matrix import matrix_differences
from tests.support.processes import wait_until

pytestmark = pytest.mark.django_db(transaction=True)
QUEUES = ("celery", "control", "matrix", "watch")


def waiting(url: str) -> dict[str, Counter[str]]:
    """queue -> task name -> messages waiting in Redis (kombu keeps each queue as a list)."""
    client = redis.Redis.from_url(url)
    return {
        queue: Counter(json.loads(raw)["headers"]["task"] for raw in client.lrange(queue, 0, -1)) for queue in QUEUES
    }


def relabel(cluster: Cluster, resource: Resource, value: str) -> None:
    obj = dict(resource.obj)
    obj["metadata"] = {**obj["metadata"], "labels": {"burst": value}}
    assert event_apply(cluster, "MODIFIED", obj) is not None


def test_a_burst_of_changes_queues_one_matrix_update_per_cluster(
    own_redis: StoppableRedis, seed_committed: Cluster, settings: Any
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = True
    settings.MATRIX_UPDATE_DELAY = 30  # nothing runs them here anyway
    models = list(Resource.objects.filter(cluster=seed_committed, kind__in=["ClusterBaseModel", "BaseModel"]))

    for step in range(500):
        relabel(seed_committed, models[step % len(models)], str(step))

    queued = waiting(own_redis.url)
    assert queued["matrix"] == Counter({"matrix.matrix_update": 1})
    assert sum(sum(counts.values()) for counts in queued.values()) == 1


def test_the_coalesced_update_levels_every_change_of_the_burst(
    own_redis: StoppableRedis, seed_committed: Cluster, settings: Any, celery_app: Celery
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = True
    settings.MATRIX_UPDATE_DELAY = 0
    model = Resource.objects.get(cluster=seed_committed, name="qwen-image-pvc")
    obj = dict(model.obj)
    obj["spec"] = {**obj["spec"], "diffusionPipeline": {"className": "QwenImagePipeline"}}
    event_apply(seed_committed, "MODIFIED", obj)
    for step in range(50):
        relabel(seed_committed, Resource.objects.get(pk=model.pk), str(step))

    with running_worker(celery_app, queues=["celery", "matrix"]):
        matrix_update_task.apply_async((seed_committed.pk,), ignore_result=False).get(timeout=30)

    assert matrix_differences(seed_committed) == []


def test_supervision_goes_to_control_matrix_work_to_matrix_and_watches_to_watch() -> None:
    routes = {
        name: app.amqp.router.route({}, name)["queue"].name
        for name in (
            "inventory.tasks.ensure_watches",
            "inventory.tasks.resync_all",
            "matrix.matrix_catch_up_all",
            "matrix.matrix_audit_all",
            "matrix.matrix_update",
            "matrix.matrix_rebuild",
            "matrix.matrix_build_chunk",
            "matrix.matrix_build_finish",
            "lint.lint_prove",
            "inventory.tasks.watch_cluster",
            "inventory.tasks.resync_cluster",
        )
    }

    assert routes == {
        "inventory.tasks.ensure_watches": "control",
        "inventory.tasks.resync_all": "control",
        "matrix.matrix_catch_up_all": "control",
        "matrix.matrix_audit_all": "control",
        "matrix.matrix_update": "matrix",
        "matrix.matrix_rebuild": "matrix",
        "matrix.matrix_build_chunk": "matrix",
        "matrix.matrix_build_finish": "matrix",
        "lint.lint_prove": "matrix",
        "inventory.tasks.watch_cluster": "watch",
        "inventory.tasks.resync_cluster": "celery",
    }


def test_an_abandoned_build_is_failed_after_the_setting_and_its_rebuild_runs_again(
    own_redis: StoppableRedis, seed_committed: Cluster, settings: Any, celery_app: Celery
) -> None:
    settings.MATRIX_BUILD_ABANDON_AFTER = 90
    published = current_build(seed_committed)
    abandoned, _chunks = matrix_build_start(seed_committed, chunk_size=1)  # its worker dies here
    MatrixBuild.objects.filter(pk=abandoned.pk).update(started_at=timezone.now() - timedelta(seconds=91))

    queued = matrix_catch_up_all_task()
    abandoned.refresh_from_db()
    with running_worker(celery_app, queues=["celery", "matrix"]):
        rebuilt = wait_until(lambda: current_build(seed_committed) != published, timeout=60)

    assert queued == {"seed": "rebuild (abandoned build)"}
    assert abandoned.status == MatrixBuild.Status.FAILED
    assert "abandoned" in abandoned.error
    assert rebuilt
    assert matrix_differences(seed_committed) == []
