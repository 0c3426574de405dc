"""A matrix right by construction (matrix.updates): rows stamped with the inventory version they
were computed from, updates that level every stale row whatever they were asked for, writes that
cannot conflict, a catch-up that verifies, and an audit that finds and repairs what differs."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from django.test import Client

from inventory.models import MODEL_KINDS, Cluster, Kind, Resource
from inventory.services import cluster_register, manifests_load, parse_cluster_setting
from inventory.sync import event_apply
from matrix import audit, updates
from matrix.models import MatrixAudit, MatrixRow
from matrix.selectors import current_build
from matrix.services import matrix_apply_changes, matrix_catch_up, matrix_is_level, matrix_rebuild
from tests.support.matrix import matrix_differences

pytestmark = pytest.mark.django_db

ARCHITECTURES = ["LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM", "NoSuchForCausalLM"]


@pytest.fixture
def demo(settings: Any) -> Cluster:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    cluster = cluster_register(parse_cluster_setting("demo=manifests:catalog/runtimes,demo")[0])
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    return cluster


def change_architecture(cluster: Cluster, model: Resource, architecture: str) -> dict[str, Any]:
    """A model spec change, as a watch event applies it; returns the change."""
    obj = copy.deepcopy(model.obj)
    obj["spec"]["modelArchitecture"] = architecture
    change = event_apply(cluster, "MODIFIED", obj)
    assert change is not None
    return change.to_dict()


def llms(cluster: Cluster) -> list[Resource]:
    return list(
        Resource.objects.filter(
            cluster=cluster, kind__in=MODEL_KINDS, error="", model_architecture__endswith="ForCausalLM"
        )
        .exclude(model_architecture="NoSuchForCausalLM")
        .order_by("pk")
    )


def test_an_update_for_one_model_also_levels_a_change_whose_update_was_lost(demo: Cluster) -> None:
    lost, sent = llms(demo)[:2]
    change_architecture(demo, lost, "NoSuchForCausalLM")  # its update is lost (a Redis restart)
    other = change_architecture(demo, sent, "NoSuchForCausalLM")

    matrix_apply_changes(demo, [other])

    assert matrix_differences(demo) == []
    assert matrix_catch_up(demo) is None


def test_after_a_thousand_changes_with_most_updates_lost_the_catch_up_levels_the_matrix(demo: Cluster) -> None:
    chooser = random.Random(10)
    models = llms(demo)
    for step in range(1000):
        model = chooser.choice(models)
        model.refresh_from_db()
        current = model.obj["spec"].get("modelArchitecture")
        change = change_architecture(demo, model, chooser.choice([a for a in ARCHITECTURES if a != current]))
        if step % 97 == 0 or step == 999:  # the few updates that arrive, the last one among them
            matrix_apply_changes(demo, [change])
    # Every update levelled what was stale when it ran; the changes after the last one's read
    # are few, and the catch-up finds them by the rows' stamps.
    matrix_catch_up(demo)

    assert matrix_differences(demo) == []
    assert matrix_is_level(demo)
    build = current_build(demo)
    assert build is not None
    assert build.applied_version == Cluster.objects.get(pk=demo.pk).inventory_version


def test_a_runtime_removed_while_its_update_was_lost_is_found_by_the_scope_digest(demo: Cluster) -> None:
    runtime = Resource.objects.get(cluster=demo, name="srt-qwen-image")
    event_apply(demo, "DELETED", runtime.obj)

    assert not matrix_is_level(demo)
    matrix_catch_up(demo)

    assert matrix_differences(demo) == []


def test_two_updates_at_once_do_not_conflict_and_the_later_row_wins(
    demo: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = llms(demo)[0]
    first = change_architecture(demo, model, "NoSuchForCausalLM")
    compute_rows = updates.compute_rows
    interleaved = []

    def compute_then_let_another_update_run(*args: Any) -> Any:
        rows = compute_rows(*args)
        if not interleaved:
            # Another worker runs a whole update between this one's read and its write.
            interleaved.append(True)
            model.refresh_from_db()
            matrix_apply_changes(demo, [change_architecture(demo, model, "LlamaForCausalLM")])
        return rows

    monkeypatch.setattr(updates, "compute_rows", compute_then_let_another_update_run)

    matrix_apply_changes(demo, [first])
    monkeypatch.undo()

    assert interleaved
    assert matrix_differences(demo) == []
    rows = MatrixRow.objects.filter(build=current_build(demo), model=model)
    assert rows.exists()
    assert len(set(rows.values_list("namespace", flat=True))) == rows.count()


def test_the_audit_finds_a_wrong_row_repairs_it_and_reports_it(demo: Cluster, client: Client, settings: Any) -> None:
    build = current_build(demo)
    assert build is not None
    wrong = MatrixRow.objects.filter(build=build, outcome=MatrixRow.Outcome.SELECTED).first()
    assert wrong is not None
    # A defect: the row is stamped current but its content is wrong.
    MatrixRow.objects.filter(pk=wrong.pk).update(outcome=MatrixRow.Outcome.NO_RUNTIME, compatible=[], selected=None)
    assert matrix_is_level(demo)

    report = audit.matrix_audit(demo, sample=10_000)

    assert report is not None
    assert report.rows_differing == 1
    assert report.examples == [[*Resource.objects.get(pk=wrong.model_id).key, wrong.namespace]]
    assert matrix_differences(demo) == []
    settings.DEBUG = True  # as `make run` serves it: /metrics answers without METRICS_TOKEN
    scraped = client.get("/metrics").content.decode()
    assert f'ome_matrix_audit_rows_differing{{cluster="{demo.name}"}} 1.0' in scraped


def test_the_audit_of_a_level_matrix_finds_nothing_and_leaves_pending_rows_to_the_update(demo: Cluster) -> None:
    change_architecture(demo, llms(demo)[0], "NoSuchForCausalLM")

    report = audit.matrix_audit(demo, sample=10_000)

    assert report is not None
    assert report.rows_differing == 0
    assert report.rows_checked > 0
    assert MatrixAudit.objects.filter(cluster=demo).count() == 1
    assert not matrix_is_level(demo)  # the changed model waits for its update


def test_a_runtime_change_restamps_every_row(demo: Cluster) -> None:
    runtime = Resource.objects.get(cluster=demo, kind=Kind.CLUSTER_SERVING_RUNTIME, name="srt-qwen-image")
    obj = copy.deepcopy(runtime.obj)
    obj["spec"]["disabled"] = True
    event_apply(demo, "MODIFIED", obj)

    matrix_catch_up(demo)

    version = Cluster.objects.get(pk=demo.pk).inventory_version
    rows = MatrixRow.objects.filter(build=current_build(demo))
    assert set(rows.values_list("inventory_version", flat=True)) == {version}
    assert matrix_differences(demo) == []


def test_an_update_keeps_the_builds_model_and_runtime_counts_current(demo: Cluster) -> None:
    before = current_build(demo)
    assert before is not None
    model = copy.deepcopy(llms(demo)[0].obj)
    model["metadata"] = {"name": "one-more", "resourceVersion": "1"}
    runtime = Resource.objects.filter(cluster=demo, kind=Kind.CLUSTER_SERVING_RUNTIME).first()
    assert runtime is not None
    added = event_apply(demo, "ADDED", model)
    removed = event_apply(demo, "DELETED", runtime.obj)
    assert added is not None
    assert removed is not None

    matrix_apply_changes(demo, [added.to_dict(), removed.to_dict()])

    after = current_build(demo)
    assert after is not None
    assert after.pk == before.pk  # an update, not a rebuild
    assert (after.models_count, after.runtimes_count) == (before.models_count + 1, before.runtimes_count - 1)
