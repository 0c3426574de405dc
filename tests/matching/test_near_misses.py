"""Near misses (how close each runtime came, by failed checks) and their fixes on either side."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import matching

from .strategies import model, model_specs, runtime, runtimes

LLAMA = {
    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
    "modelFramework": {"name": "transformers", "version": "4.51.0"},
    "modelArchitecture": "LlamaForCausalLM",
    "modelParameterSize": "8B",
}


def _entry(**overrides: Any) -> dict[str, Any]:
    entry = {
        "modelFormat": {"name": "safetensors", "version": "1.0.0"},
        "modelFramework": {"name": "transformers", "version": "4.51.0"},
        "modelArchitecture": "LlamaForCausalLM",
        "autoSelect": True,
    }
    entry.update(overrides)
    return {key: value for key, value in entry.items() if value is not None}


def _auto_selected(model_obj: dict[str, Any], runtime_obj: dict[str, Any]) -> bool:
    selection = matching.select(model_obj, [runtime_obj], namespace=runtime_obj["metadata"].get("namespace", ""))
    return [match.name for match in selection.compatible] == [runtime_obj["metadata"]["name"]]


def _applied(fix: matching.Fix, objects: dict[tuple[str, str, str], dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    changed = dict(objects)
    for patch in fix.patches:
        changed[patch.target] = matching.json_patch(objects[patch.target], list(patch.operations))
    return changed


def _holds(obj: Any, path: str) -> bool:
    """Whether the JSON pointer leads to a value in obj."""
    for part in path.strip("/").split("/"):
        if not isinstance(obj, dict) or part not in obj:
            return False
        obj = obj[part]
    return True


def _fixes(model_obj: dict[str, Any], runtime_obj: dict[str, Any]) -> list[matching.Fix]:
    return list(matching.propose_fixes(model_obj, runtime_obj))


def test_a_version_one_patch_release_off_is_fixed_on_the_runtime_never_by_changing_the_models_version() -> None:
    llama = model(LLAMA)
    off = runtime([_entry(modelFramework={"name": "transformers", "version": "4.51.1"})], name="sglang")

    miss = matching.near_miss(llama, off)
    fixes = _fixes(llama, off)

    assert miss is not None
    assert miss.distance == 1
    assert miss.checks == ("framework",)
    assert miss.failed[0].reason == "framework version mismatch (model=4.51.0, runtime=4.51.1)"
    operations = {
        (fix.side, patch.operations[0]["path"], str(patch.operations[0]["value"]))
        for fix in fixes
        for patch in fix.patches
    }
    assert {(side, path) for side, path, _value in operations} == {
        ("runtime", "/spec/supportedModelFormats/0/modelFramework/version"),
        ("runtime", "/spec/supportedModelFormats/0/modelFramework/operator"),
        ("runtime", "/spec/supportedModelFormats/-"),  # a new entry for the model as it is
    }
    for fix in fixes:
        changed = _applied(fix, {matching.parse_model(llama).key: llama, matching.parse_runtime(off).key: off})
        assert _auto_selected(changed[("ClusterBaseModel", "", "m")], changed[("ClusterServingRuntime", "", "sglang")])


def test_a_newer_model_version_is_not_fixed_by_widening_the_operator() -> None:
    llama = model({**LLAMA, "modelFramework": {"name": "transformers", "version": "4.52.0"}})
    older = runtime([_entry()])

    fixes = _fixes(llama, older)

    # GreaterThanOrEqual means runtime >= model in OME: it does not help a newer model.
    assert all("operator" not in text for fix in fixes for text in fix.changes)
    assert next(fix.changes for fix in fixes if fix.side == "runtime") == (
        "runtime: set modelFramework.version 4.52.0 on entry 0",
    )
    assert all(fix.side == "runtime" for fix in fixes)


def test_an_entry_without_auto_select_is_one_check_away() -> None:
    llama = model(LLAMA)
    manual = runtime([_entry(autoSelect=None)])

    miss = matching.near_miss(llama, manual)
    (fix,) = _fixes(llama, manual)

    assert miss is not None
    assert miss.checks == ("autoSelect",)
    assert fix.patches[0].operations == (
        {"op": "add", "path": "/spec/supportedModelFormats/0/autoSelect", "value": True},
    )


def test_a_size_range_that_excludes_the_model_moves_the_bound_it_misses() -> None:
    big = model({**LLAMA, "modelParameterSize": "70B"})
    small = runtime([_entry()], modelSizeRange={"min": "1B", "max": "13B"})

    (fix,) = _fixes(big, small)

    assert fix.checks == ("size",)
    assert fix.patches[0].operations == ({"op": "add", "path": "/spec/modelSizeRange/max", "value": "70B"},)


def test_a_recorded_quantization_is_never_removed_from_the_model() -> None:
    fp8 = model({**LLAMA, "quantization": "fp8"})
    plain = runtime([_entry()])

    fixes = _fixes(fp8, plain)

    assert {fix.side for fix in fixes} == {"runtime"}
    assert fixes[0].patches[0].operations == (
        {"op": "add", "path": "/spec/supportedModelFormats/0/quantization", "value": "fp8"},
    )


def test_a_recorded_architecture_is_never_changed_to_fit_a_runtime() -> None:
    other = runtime([_entry(modelArchitecture="Qwen2ForCausalLM")])

    fixes = _fixes(model(LLAMA), other)

    assert fixes
    assert all(patch.target[0] == "ClusterServingRuntime" for fix in fixes for patch in fix.patches)


def test_a_fact_ome_could_not_record_may_be_filled_in_on_the_model() -> None:
    pvc = {**LLAMA, "storage": {"storageUri": "pvc://models/llama"}}
    del pvc["modelArchitecture"]
    typed = runtime([_entry()])

    model_fix = next(fix for fix in _fixes(model(pvc), typed) if fix.side == "model")

    assert model_fix.patches[0].operations == (
        {"op": "add", "path": "/spec/modelArchitecture", "value": "LlamaForCausalLM"},
    )
    assert model_fix.changes == ("model: fill in spec.modelArchitecture LlamaForCausalLM (OME could not record it)",)


def test_an_unquantized_model_that_ome_recorded_is_not_given_a_quantization() -> None:
    recorded = model({**LLAMA, "storage": {"storageUri": "hf://meta/llama"}})
    fp8_only = runtime([_entry(quantization="fp8")])

    assert all(fix.side == "runtime" for fix in _fixes(recorded, fp8_only))


def test_a_pipeline_miss_offers_the_one_click_model_patch_and_a_relaxed_requirement() -> None:
    pipeline = {
        "className": "QwenImagePipeline",
        "transformer": {"library": "diffusers", "type": "QwenImageTransformer2DModel"},
    }
    image = model({"modelFormat": {"name": "safetensors"}, "diffusionPipeline": {"className": "QwenImagePipeline"}})
    strict = runtime([{"modelFormat": {"name": "safetensors"}, "diffusionPipeline": pipeline, "autoSelect": True}])

    fixes = {(fix.side, fix.patches[0].operations[0]["path"].endswith("/-")): fix for fix in _fixes(image, strict)}
    fixes = {"model": fixes["model", False], "runtime": fixes["runtime", False]}

    assert fixes["model"].pipeline == matching.pipeline_patch(image, strict).patch
    assert fixes["model"].patches[0].operations == (
        {"op": "add", "path": "/spec/diffusionPipeline/transformer", "value": pipeline["transformer"]},
    )
    assert fixes["runtime"].pipeline is None
    assert fixes["runtime"].patches[0].operations == (
        {"op": "remove", "path": "/spec/supportedModelFormats/0/diffusionPipeline/transformer"},
    )


def test_another_format_has_no_small_fix() -> None:
    gguf = runtime([_entry(modelFormat={"name": "gguf"})])

    assert matching.near_miss(model(LLAMA), gguf).checks == ("format",)  # type: ignore[union-attr]
    assert _fixes(model(LLAMA), gguf) == []


def test_near_misses_come_closest_first_namespaced_before_cluster_runtimes() -> None:
    llama = model(LLAMA, namespace="team-a")
    runtimes_ = [
        runtime([_entry()], name="picked"),
        runtime([_entry(autoSelect=None, quantization="fp8")], name="two-away"),
        runtime([_entry(autoSelect=None)], name="b-one-away"),
        runtime([_entry(autoSelect=None)], name="z-one-away", namespace="team-a"),
        runtime([_entry(autoSelect=None)], name="elsewhere", namespace="team-b"),
    ]

    misses = matching.near_misses(llama, runtimes_)

    assert [(miss.runtime[2], miss.distance) for miss in misses] == [
        ("z-one-away", 1),
        ("b-one-away", 1),
        ("two-away", 2),
    ]


def test_a_disabled_runtime_counts_its_disabled_flag_as_a_check() -> None:
    off = runtime([_entry()], disabled=True)

    (fix,) = _fixes(model(LLAMA), off)

    assert matching.near_miss(model(LLAMA), off).checks == ("disabled",)  # type: ignore[union-attr]
    assert fix.patches[0].operations == ({"op": "add", "path": "/spec/disabled", "value": False},)


@settings(max_examples=300, deadline=None)
@given(model_specs(), runtimes())
def test_every_proposed_fix_makes_ome_auto_select_the_runtime(spec: dict[str, Any], drawn: dict[str, Any]) -> None:
    model_obj, runtime_obj = model(spec), copy.deepcopy(drawn)
    try:
        fixes = _fixes(model_obj, runtime_obj)
    except matching.ManifestError:
        return
    keys = {matching.parse_model(model_obj).key: model_obj, matching.parse_runtime(runtime_obj).key: runtime_obj}
    for fix in fixes:
        for patch in fix.patches:
            if patch.target[0] == "ClusterBaseModel":  # a model fix only fills in what is absent
                assert all(op["op"] == "add" and not _holds(model_obj, op["path"]) for op in patch.operations)
        changed = _applied(fix, keys)
        new_model, new_runtime = (
            changed[("ClusterBaseModel", "", "m")],
            changed[matching.parse_runtime(runtime_obj).key],
        )
        assert matching.near_miss(new_model, new_runtime) is None
        assert _auto_selected(new_model, new_runtime)


@given(model_specs(), st.lists(runtimes(), max_size=4))
def test_the_runtimes_ome_auto_selects_are_exactly_those_without_a_near_miss(
    spec: dict[str, Any], drawn: list[dict[str, Any]]
) -> None:
    model_obj = model(spec)
    named = [copy.deepcopy(item) for item in drawn]
    for index, item in enumerate(named):
        item["metadata"]["name"] = f"rt{index}"
    try:
        selection = matching.select(model_obj, named, namespace="team-a")
        misses = matching.near_misses(model_obj, named, "team-a")
    except matching.ManifestError:
        return
    in_scope = {item["metadata"]["name"] for item in named if item["metadata"].get("namespace") in (None, "team-a")}
    assert {match.name for match in selection.compatible} == in_scope - {miss.runtime[2] for miss in misses}
