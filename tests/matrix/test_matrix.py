"""The matrix over the bundled demo: builds, incremental updates, history, what readers see."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import timedelta

import pytest

from access.scope import SYSTEM
from inventory.models import Cluster, Resource
from inventory.services import cluster_register, manifests_load, parse_cluster_setting
from inventory.sync import event_apply
from matrix import services
from matrix.cells import runtimes_in_scope
from matrix.models import CellChange, MatrixBuild, MatrixRow
from matrix.selectors import cell_reason, current_build
from matrix.services import (
    matrix_apply_changes,
    matrix_build_chunk,
    matrix_build_finish,
    matrix_build_start,
    matrix_builds_abandon,
    matrix_catch_up,
    matrix_rebuild,
)
from tests.support.matrix import matrix_cells

pytestmark = pytest.mark.django_db

PVC_MODEL = ("ClusterBaseModel", "", "qwen-image-pvc")
PIPELINE_RUNTIME = ("ClusterServingRuntime", "", "srt-qwen-image-pipeline")
PIPELINE_PATCH = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}


@pytest.fixture
def demo(settings: object) -> Iterator[Cluster]:
    settings.MATRIX_UPDATE_ON_CHANGE = False  # type: ignore[attr-defined]
    cluster = cluster_register(parse_cluster_setting("demo=manifests:catalog/runtimes,demo")[0])
    manifests_load(cluster, cluster.manifests, prune=True)
    return cluster


def row(cluster: Cluster, model_name: str, namespace: str = "") -> MatrixRow:
    build = current_build(cluster)
    assert build is not None
    return MatrixRow.objects.get(build=build, model__name=model_name, namespace=namespace)


def cell_statuses(cluster: Cluster, model_name: str, namespace: str = "") -> dict[str, str]:
    build = current_build(cluster)
    assert build is not None
    rows = MatrixRow.objects.filter(build=build, model__name=model_name, namespace=namespace)
    return {cell.runtime.name: cell.status for cell in matrix_cells(build, rows=rows)}


def patch_pipeline(cluster: Cluster) -> dict:
    resource = Resource.objects.get(cluster=cluster, name="qwen-image-pvc")
    obj = copy.deepcopy(resource.obj)
    obj["spec"]["diffusionPipeline"] = PIPELINE_PATCH
    return {"kind": "ClusterBaseModel", "namespace": "", "name": "qwen-image-pvc", "obj": obj}


def test_the_seed_model_is_served_by_the_catalog_runtime_and_excluded_by_the_pipeline_runtime(demo: Cluster) -> None:
    matrix_rebuild(demo)

    statuses = cell_statuses(demo, "qwen-image-pvc")

    assert row(demo, "qwen-image-pvc").selected.name == "srt-qwen-image"
    assert statuses["srt-qwen-image"] == "selected"
    assert statuses["srt-qwen-image-pipeline"] == "excluded"
    assert cell_reason(demo, PVC_MODEL, PIPELINE_RUNTIME, "", scope=SYSTEM) == (
        "model format 'mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0' not in supported "
        "formats: diffusion pipeline required by runtime but not specified in model"
    )


def test_a_cluster_model_has_a_row_per_namespace_and_a_base_model_only_its_own(demo: Cluster) -> None:
    build = matrix_rebuild(demo)

    cluster_rows = set(
        MatrixRow.objects.filter(build=build, model__name="qwen-image-pvc").values_list("namespace", flat=True)
    )
    base_model = Resource.objects.filter(cluster=demo, kind="BaseModel").first()
    assert base_model is not None
    base_rows = list(MatrixRow.objects.filter(build=build, model=base_model).values_list("namespace", flat=True))

    assert cluster_rows == {"", "research", "team-a", "team-b"}
    assert base_rows == [base_model.namespace]


def test_patching_the_pipeline_updates_only_that_models_rows_and_records_why(demo: Cluster) -> None:
    matrix_rebuild(demo)
    other_before = row(demo, "qwen-image").pk
    change = event_apply(demo, "MODIFIED", patch_pipeline(demo)["obj"])
    assert change is not None

    written = matrix_apply_changes(demo, [change.to_dict()])

    assert written == 4  # one row per namespace of the patched model
    assert row(demo, "qwen-image-pvc").selected.name == "srt-qwen-image-pipeline"
    assert row(demo, "qwen-image").pk == other_before
    history = CellChange.objects.get(model_name="qwen-image-pvc", runtime_name="srt-qwen-image-pipeline", namespace="")
    assert (history.old_status, history.new_status) == ("excluded", "selected")
    assert history.cause[0]["fields"] == ["spec.diffusionPipeline"]


def test_a_runtime_change_can_change_every_row(demo: Cluster) -> None:
    matrix_rebuild(demo)
    runtime = Resource.objects.get(cluster=demo, name="srt-qwen-image")
    obj = copy.deepcopy(runtime.obj)
    obj["spec"]["disabled"] = True
    change = event_apply(demo, "MODIFIED", obj)
    assert change is not None

    matrix_apply_changes(demo, [change.to_dict()])

    assert row(demo, "qwen-image-pvc").outcome == "no-runtime"
    assert cell_statuses(demo, "qwen-image-pvc")["srt-qwen-image"] == "disabled"
    assert CellChange.objects.filter(runtime_name="srt-qwen-image", new_status="disabled").exists()


def test_readers_never_see_a_build_in_progress(demo: Cluster) -> None:
    published = matrix_rebuild(demo)

    running, _chunks = matrix_build_start(demo)

    assert current_build(demo) == published
    assert running.status == MatrixBuild.Status.RUNNING


def test_a_chunked_build_gives_the_same_rows_as_one_chunk(demo: Cluster) -> None:
    def snapshot() -> set[tuple]:
        build = current_build(demo)
        return {
            (r.model_id, r.namespace, r.outcome, r.selected_id, str(r.compatible), str(r.manual))
            for r in MatrixRow.objects.filter(build=build)
        }

    matrix_rebuild(demo, chunk_size=10_000)
    whole = snapshot()
    build = matrix_rebuild(demo, chunk_size=17)

    assert build.chunks > 10
    assert snapshot() == whole


def test_a_full_rebuild_replaces_the_previous_build_and_records_changed_cells(demo: Cluster) -> None:
    first = matrix_rebuild(demo)
    event_apply(demo, "MODIFIED", patch_pipeline(demo)["obj"])

    second = matrix_rebuild(demo)

    assert not MatrixBuild.objects.filter(pk=first.pk).exists()
    assert current_build(demo) == second
    assert CellChange.objects.filter(model_name="qwen-image-pvc", new_status="selected", cause=[]).exists()


def test_cells_are_filtered_by_status_and_runtimes_in_scope(demo: Cluster) -> None:
    build = matrix_rebuild(demo)

    selected = list(matrix_cells(build, namespace="team-a", statuses=["selected"]))
    scope = list(runtimes_in_scope(demo, "team-a"))

    assert selected
    assert all(cell.status == "selected" and cell.rank == 0 for cell in selected)
    assert any(runtime.kind == "ServingRuntime" for runtime in scope)
    assert all(runtime.namespace in ("", "team-a") for runtime in scope)


def test_the_catch_up_levels_a_matrix_whose_update_was_lost(demo: Cluster) -> None:
    matrix_rebuild(demo)
    event_apply(demo, "MODIFIED", patch_pipeline(demo)["obj"])  # no update queued: it is lost

    assert matrix_catch_up(demo) == 4
    assert row(demo, "qwen-image-pvc").selected.name == "srt-qwen-image-pipeline"
    assert matrix_catch_up(demo) is None


def test_a_build_abandoned_by_a_dead_worker_is_failed_and_the_current_one_stays(demo: Cluster) -> None:
    published = matrix_rebuild(demo)
    abandoned, chunks = matrix_build_start(demo)
    matrix_build_chunk(abandoned.pk, chunks[0])

    assert matrix_builds_abandon(demo, older_than=timedelta(0)) == 1
    assert MatrixBuild.objects.get(pk=abandoned.pk).status == MatrixBuild.Status.FAILED
    assert not MatrixRow.objects.filter(build=abandoned).exists()
    assert current_build(demo) == published


def test_a_build_abandoned_while_its_worker_publishes_it_stays_failed_and_the_current_one_stays(
    demo: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    published = matrix_rebuild(demo)
    late, chunks = matrix_build_start(demo)
    for chunk in chunks:
        matrix_build_chunk(late.pk, chunk)
    read_current = services.current_build

    def abandoned_meanwhile(cluster: Cluster) -> MatrixBuild | None:
        # The catch-up fails the build between the worker's look at it and its publishing.
        matrix_builds_abandon(demo, older_than=timedelta(0))
        return read_current(cluster)

    monkeypatch.setattr(services, "current_build", abandoned_meanwhile)
    finished = matrix_build_finish(late.pk)

    assert finished.status == MatrixBuild.Status.FAILED
    assert MatrixBuild.objects.get(pk=late.pk).status == MatrixBuild.Status.FAILED
    assert read_current(demo) == published
    assert MatrixRow.objects.filter(build=published).count() == published.rows_count > 0


def test_a_build_published_before_the_abandonment_reached_it_stays_current(demo: Cluster) -> None:
    matrix_rebuild(demo)
    slow, chunks = matrix_build_start(demo)
    for chunk in chunks:
        matrix_build_chunk(slow.pk, chunk)
    published = matrix_build_finish(slow.pk)  # after the catch-up listed it as abandoned

    services.matrix_build_fail(slow.pk, "abandoned: still running after 0:00:00")

    assert MatrixBuild.objects.get(pk=slow.pk).status == MatrixBuild.Status.SUCCEEDED
    assert current_build(demo) == published
    assert MatrixRow.objects.filter(build=published).count() == published.rows_count > 0
