"""What-if: cell changes before anything is applied, over the demo cluster and small manifests."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from access.scope import SYSTEM
from inventory.models import Cluster, Resource
from inventory.parsed import load_inventory
from inventory.sync import event_apply
from matrix.rows import compute_rows
from tests.support.inventory import inventory_from_objects
from tests.support.manifests import llama_model as model
from whatif.errors import WhatIfError
from whatif.parse import parse_documents
from whatif.services import whatif, whatif_inventory, whatif_model_patch

PVC_MODEL = ("ClusterBaseModel", "", "qwen-image-pvc")
HF_MODEL = ("ClusterBaseModel", "", "qwen-image")
PIPELINE_RUNTIME = ("ClusterServingRuntime", "", "srt-qwen-image-pipeline")
CATALOG_RUNTIME = ("ClusterServingRuntime", "", "srt-qwen-image")
TEAM_A_RUNTIME = ("ServingRuntime", "team-a", "team-a-sglang-llama")
LLAMA_70B = ("ClusterBaseModel", "", "llama-3-3-70b-instruct")
SEED_PATCH = {
    "spec": {"diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}}
}


def obj(demo: Cluster, key: tuple[str, str, str]) -> dict[str, Any]:
    resource = Resource.objects.get(cluster=demo, kind=key[0], namespace=key[1], name=key[2])
    return copy.deepcopy(resource.obj)


def statuses(rows: list[Any], inventory: Any, model_key: tuple[str, str, str]) -> dict[str, dict]:
    model_id = inventory.ids[model_key]
    return {row.namespace: row.statuses() for row in rows if row.model_id == model_id}


# ------------------------------------------------------------------------------------------
# The demo cluster


@pytest.mark.django_db
def test_the_seed_patch_preview_moves_the_pick_to_the_pipeline_runtime_in_every_namespace(demo: Cluster) -> None:
    cached = load_inventory(demo)

    result = whatif_model_patch(demo, "ClusterBaseModel/qwen-image-pvc", SEED_PATCH, scope=SYSTEM)

    assert [row.namespace for row in result.rows] == ["", "research", "team-a", "team-b"]
    for row in result.rows:
        assert (row.old_selected, row.new_selected) == (CATALOG_RUNTIME, PIPELINE_RUNTIME)
        assert (row.old_score, row.new_score) == (2, 4)  # CRD weight 1: (1 + 1) x priority
        assert row.gained == [PIPELINE_RUNTIME]
        assert row.lost == []
        cells = {cell.runtime: (cell.old_status, cell.new_status, cell.new_rank) for cell in row.cells}
        assert cells == {CATALOG_RUNTIME: ("selected", "compatible", 1), PIPELINE_RUNTIME: ("excluded", "selected", 0)}
    assert result.objects[0].to_dict() == {
        **dict(zip(("kind", "namespace", "name"), PVC_MODEL, strict=True)),
        "action": "changed",
    }
    # Nothing was applied or mutated.
    assert cached.models[PVC_MODEL].pipeline is None
    assert load_inventory(demo).models[PVC_MODEL] == cached.models[PVC_MODEL]
    assert "diffusionPipeline" not in obj(demo, PVC_MODEL)["spec"]


@pytest.mark.django_db
def test_the_preview_agrees_with_the_matrix_rows_after_the_change_is_applied(demo: Cluster) -> None:
    result = whatif_model_patch(demo, PVC_MODEL, SEED_PATCH, scope=SYSTEM)
    patched = obj(demo, PVC_MODEL)
    patched["spec"].update(SEED_PATCH["spec"])

    event_apply(demo, "MODIFIED", patched)
    inventory = load_inventory(demo)
    after = statuses(compute_rows(inventory, [PVC_MODEL]), inventory, PVC_MODEL)

    for row in result.rows:
        for cell in row.cells:
            assert after[row.namespace].get(cell.runtime, "excluded") == cell.new_status


@pytest.mark.django_db
def test_disabling_a_runtime_recomputes_only_models_it_could_match(demo: Cluster) -> None:
    runtime = obj(demo, CATALOG_RUNTIME)
    runtime["spec"]["disabled"] = True

    result = whatif(demo, [runtime], scope=SYSTEM)

    assert result.models_evaluated < 10  # not the 211 models of the cluster
    pvc = result.row(PVC_MODEL, "")
    assert pvc is not None
    assert (pvc.old_outcome, pvc.new_outcome, pvc.new_selected) == ("selected", "no-runtime", None)
    assert pvc.lost == [CATALOG_RUNTIME]
    assert pvc.new_error is not None
    assert pvc.new_error.startswith(
        "no runtime found to support model diffusers with format diffusers in namespace . Checked 204 runtimes"
    )
    assert "srt-qwen-image (runtime is disabled)" in pvc.new_error
    hf = result.row(HF_MODEL, "")
    assert hf is not None
    assert not hf.pick_changed
    assert [(cell.runtime, cell.old_status, cell.new_status) for cell in hf.cells] == [
        (CATALOG_RUNTIME, "compatible", "disabled")
    ]


@pytest.mark.django_db
def test_deleting_the_namespaced_runtime_hands_team_a_back_to_the_cluster_runtimes(demo: Cluster) -> None:
    cluster_pick = load_inventory(demo).grid.select(LLAMA_70B, "").compatible[0].key

    result = whatif(demo, deletions=["ServingRuntime/team-a/team-a-sglang-llama"], scope=SYSTEM)

    row = result.row(LLAMA_70B, "team-a")
    assert row is not None
    assert (row.old_selected, row.new_selected) == (TEAM_A_RUNTIME, cluster_pick)
    assert row.lost == [TEAM_A_RUNTIME]
    assert result.row(LLAMA_70B, "") is None  # the cluster-scope row does not see namespaced runtimes
    assert [change.to_dict()["action"] for change in result.objects] == ["removed"]


@pytest.mark.django_db
def test_a_runtime_in_a_new_namespace_creates_rows_there(demo: Cluster) -> None:
    runtime = obj(demo, TEAM_A_RUNTIME)
    runtime["metadata"] = {"name": "team-c-llama", "namespace": "team-c"}

    result = whatif(demo, [runtime], scope=SYSTEM)

    row = result.row(LLAMA_70B, "team-c")
    assert row is not None
    assert (row.old_row, row.new_row) == (False, True)
    assert row.new_selected == ("ServingRuntime", "team-c", "team-c-llama")
    assert result.objects[0].action == "added"


@pytest.mark.django_db
def test_an_unchanged_manifest_changes_nothing(demo: Cluster) -> None:
    result = whatif(demo, [obj(demo, CATALOG_RUNTIME)], scope=SYSTEM)

    assert result.rows == []
    assert result.to_dict()["objects"] == [
        {"kind": "ClusterServingRuntime", "namespace": "", "name": "srt-qwen-image", "action": "unchanged"}
    ]


@pytest.mark.django_db
def test_patch_and_deletion_errors_name_what_is_wrong(demo: Cluster) -> None:
    with pytest.raises(WhatIfError, match=r"must not change kind, metadata\.name"):
        whatif_model_patch(demo, PVC_MODEL, {"metadata": {"name": "other"}}, scope=SYSTEM)
    with pytest.raises(WhatIfError, match="is not in the cluster"):
        whatif_model_patch(demo, ("ClusterBaseModel", "", "nope"), SEED_PATCH, scope=SYSTEM)
    with pytest.raises(WhatIfError, match="is not a model"):
        whatif_model_patch(demo, CATALOG_RUNTIME, SEED_PATCH, scope=SYSTEM)
    with pytest.raises(WhatIfError, match="ClusterServingRuntime nope is not in the cluster"):
        whatif(demo, deletions=[("ClusterServingRuntime", "", "nope")], scope=SYSTEM)


# ------------------------------------------------------------------------------------------
# Small manifests


def runtime(name: str, *, namespace: str | None = None, priority: int = 1, **entry: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "kind": "ServingRuntime" if namespace is not None else "ClusterServingRuntime",
        "metadata": metadata,
        "spec": {
            "supportedModelFormats": [
                {
                    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
                    "modelFramework": {"name": "transformers", "version": "4.51.0"},
                    "modelArchitecture": "LlamaForCausalLM",
                    "autoSelect": True,
                    "priority": priority,
                    **entry,
                }
            ]
        },
    }


@pytest.fixture
def small() -> Any:
    return inventory_from_objects([model("llama"), runtime("rt-a"), runtime("rt-b", priority=2)])


RT_A = ("ClusterServingRuntime", "", "rt-a")
RT_B = ("ClusterServingRuntime", "", "rt-b")
LLAMA = ("ClusterBaseModel", "", "llama")


def test_raising_a_priority_changes_the_pick_and_the_scores(small: Any) -> None:
    result = whatif_inventory(small, [runtime("rt-a", priority=3)])

    row = result.row(LLAMA, "")
    assert row is not None
    assert (row.old_selected, row.new_selected, row.old_score, row.new_score) == (RT_B, RT_A, 4, 6)
    assert [(c.runtime, c.old_status, c.new_status, c.old_score, c.new_score) for c in row.cells] == [
        (RT_A, "compatible", "selected", 2, 6),
        (RT_B, "selected", "compatible", 4, 4),
    ]
    assert row.gained == row.lost == []
    assert small.runtimes[RT_A].entries[0].priority == 1  # the original view is untouched


def test_a_new_model_gains_every_runtime_that_matches_it(small: Any) -> None:
    text = "kind: ClusterBaseModel\nmetadata: {name: llama-2}\nspec:\n" + "\n".join(
        f"  {line}"
        for line in [
            "modelFormat: {name: safetensors, version: '1.0.0'}",
            "modelFramework: {name: transformers, version: '4.51.0'}",
            "modelArchitecture: LlamaForCausalLM",
        ]
    )

    result = whatif_inventory(small, text)

    row = result.row(("ClusterBaseModel", "", "llama-2"), "")
    assert row is not None
    assert (row.old_outcome, row.new_outcome, row.old_row, row.new_row) == (None, "selected", False, True)
    assert row.gained == [RT_A, RT_B]
    assert [cell.old_status for cell in row.cells] == [None, None]


def test_manifests_get_crd_defaults_and_the_default_namespace(small: Any) -> None:
    parsed = parse_documents([runtime("team", namespace="")])
    assert parsed[0][1].key == ("ServingRuntime", "default", "team")
    assert parsed[0][0]["spec"]["supportedModelFormats"][0]["modelFormat"]["weight"] == 1

    result = whatif_inventory(small, [runtime("rt-c", priority=5)])

    row = result.row(LLAMA, "")
    assert row is not None
    assert row.new_score == 10


def test_a_model_that_loses_its_format_becomes_invalid(small: Any) -> None:
    result = whatif_inventory(small, [model("llama", modelFormat=None)])

    row = result.row(LLAMA, "")
    assert row is not None
    assert (row.old_outcome, row.new_outcome) == ("selected", "invalid")
    assert row.new_error == "invalid model specification: modelFormat.name: model format name is required"
    assert row.lost == [RT_A, RT_B]


def test_json_text_and_list_kinds_are_read(small: Any) -> None:
    text = '{"kind": "List", "items": [{"kind": "ClusterServingRuntime", "metadata": {"name": "rt-a"}, "spec": {"disabled": true}}]}'

    result = whatif_inventory(small, text)

    row = result.row(LLAMA, "")
    assert row is not None
    assert row.cells[0].new_status == "disabled"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            "kind: ClusterServingRuntime\nmetadata: {name: x}\n---\nkind: [unclosed",
            "document 2: invalid YAML at line ",
        ),
        (
            "kind: ClusterServingRuntime\nmetadata: {name: x}\nspec:\n  supportedModelFormats:\n  - priority: high\n",
            "document 1: ClusterServingRuntime x: spec.supportedModelFormats[0].priority: expected an integer",
        ),
        ("---\nkind: InferenceService\nmetadata: {name: x}\n", "document 1: kind: a what-if takes BaseModel"),
        ("- 1\n", "document 1: expected a mapping, got int"),
        ("kind: BaseModel\nmetadata: {namespace: a}\n", "document 1: BaseModel: metadata.name: missing"),
        ("", "nothing to evaluate"),
        (b"\xff\xfe", "the manifests are not UTF-8 text"),
        ("a: " + "{a: " * 3_000, "document 1: the YAML is nested too deeply"),
    ],
)
def test_bad_input_gives_an_error_naming_the_document_and_field(small: Any, source: Any, message: str) -> None:
    with pytest.raises(WhatIfError) as caught:
        whatif_inventory(small, source)

    assert str(caught.value).startswith(message)
    assert caught.value.to_dict()["message"] == str(caught.value)


def test_text_above_the_size_limit_is_refused(small: Any, settings: Any) -> None:
    settings.OME_WHATIF_MAX_BYTES = 100

    with pytest.raises(WhatIfError, match="larger than 100 bytes"):
        whatif_inventory(small, "# " + "x" * 200)


def test_a_key_cannot_be_both_changed_and_deleted(small: Any) -> None:
    with pytest.raises(WhatIfError, match="both changed and deleted"):
        whatif_inventory(small, [runtime("rt-a")], deletions=[{"kind": "ClusterServingRuntime", "name": "rt-a"}])


def test_the_result_is_plain_data(small: Any) -> None:

    result = whatif_inventory(small, deletions=[RT_B])

    data = json.loads(json.dumps(result.to_dict()))
    assert data["summary"] == {
        "rows_changed": 1,
        "cells_changed": 2,
        "picks_changed": 1,
        "models_evaluated": 1,
        "rows_evaluated": 1,
    }
    assert data["rows"][0]["lost"] == [{"kind": "ClusterServingRuntime", "namespace": "", "name": "rt-b"}]
