"""The matrix tasks with a real Redis and a real worker: a full rebuild fans out in chunks."""

from __future__ import annotations

import threading

import pytest
from celery.worker import WorkController

from inventory.models import Cluster, Resource
from inventory.services import cluster_register, manifests_load, parse_cluster_setting
from inventory.sync import event_apply
from matrix.models import MatrixBuild, MatrixRow
from matrix.selectors import current_build
from matrix.signals import matrix_updated
from matrix.tasks import matrix_rebuild_task, matrix_update_task

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def demo(settings: object) -> Cluster:
    settings.MATRIX_UPDATE_ON_CHANGE = False  # type: ignore[attr-defined]
    settings.MATRIX_CHUNK_MODELS = 50  # type: ignore[attr-defined]
    cluster = cluster_register(parse_cluster_setting("demo=manifests:catalog/runtimes,demo")[0])
    manifests_load(cluster, cluster.manifests, prune=True)
    return cluster


def rebuild(cluster: Cluster) -> MatrixBuild:
    """Run the rebuild task and wait until the chord's callback has finished: published the
    build and levelled what changed meanwhile, which it announces last (matrix_updated; the
    worker runs in this process). Waiting for the published status alone would let a change
    made next be levelled by the callback instead of the task a test runs."""
    finished = threading.Event()

    def announced(sender: object, cluster_id: int, **kwargs: object) -> None:
        if cluster_id == cluster.pk:
            finished.set()

    matrix_updated.connect(announced, weak=False)
    try:
        started = matrix_rebuild_task.apply_async((cluster.pk,), ignore_result=False).get(timeout=90)
        assert finished.wait(timeout=120)
    finally:
        matrix_updated.disconnect(announced)
    build = MatrixBuild.objects.get(pk=started["build"])
    assert build.status == MatrixBuild.Status.SUCCEEDED
    return build


def test_a_worker_builds_the_matrix_in_chunks_and_publishes_it(demo: Cluster, celery_worker: WorkController) -> None:
    build = rebuild(demo)

    assert build.status == MatrixBuild.Status.SUCCEEDED
    assert build.chunks == build.chunks_done > 1
    assert current_build(demo) == build
    assert MatrixRow.objects.filter(build=build).count() == build.rows_count > 800


def test_a_worker_applies_an_inventory_change_to_the_matrix(demo: Cluster, celery_worker: WorkController) -> None:
    build = rebuild(demo)
    model = Resource.objects.get(cluster=demo, name="qwen-image-pvc")
    obj = dict(model.obj)
    obj["spec"] = {
        **obj["spec"],
        "diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}},
    }
    change = event_apply(demo, "MODIFIED", obj)
    assert change is not None

    written = matrix_update_task.apply_async((demo.pk,), ignore_result=False).get(timeout=90)

    assert written == 4
    row = MatrixRow.objects.get(build=build, model=model, namespace="")
    assert row.selected is not None
    assert row.selected.name == "srt-qwen-image-pipeline"
