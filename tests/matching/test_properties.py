"""Properties of the matcher that hold for any input, checked with hypothesis."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import matching
from matching.parse import parse_model, parse_runtime
from matching.pipeline import pipeline_mismatch

from .strategies import COMPONENTS, components, entries, model, model_specs, pipelines, runtime, runtimes


@given(pipelines())
def test_a_model_whose_pipeline_equals_the_entrys_passes_the_pipeline_check(pipeline: dict[str, Any]) -> None:
    parsed_model = parse_model(model({"modelFormat": {"name": "diffusers"}, "diffusionPipeline": pipeline}))
    parsed_runtime = parse_runtime(runtime([{"modelFormat": {"name": "diffusers"}, "diffusionPipeline": pipeline}]))

    assert pipeline_mismatch(parsed_model.pipeline, parsed_runtime.entries[0].pipeline) is None


def _add_requirement(entry: dict[str, Any], choice: int, extra: dict[str, Any]) -> dict[str, Any]:
    stricter = copy.deepcopy(entry)
    pipeline = stricter.setdefault("diffusionPipeline", {})
    name = COMPONENTS[choice % len(COMPONENTS)]
    if choice % 3 == 0:
        pipeline.setdefault("className", "QwenImagePipeline")
    elif choice % 3 == 1:
        pipeline[name] = {**extra, **pipeline.get(name, {})}
    else:
        pipeline.setdefault("additionalComponents", {}).setdefault("processor", extra)
    return stricter


@given(model_specs(), entries(), st.integers(min_value=0, max_value=30), components)
def test_adding_a_requirement_to_an_entry_never_adds_a_match(
    spec: dict[str, Any], entry: dict[str, Any], choice: int, extra: dict[str, Any]
) -> None:
    stricter = _add_requirement(entry, choice, extra)

    before = matching.check(model(spec), runtime([entry])).compatible
    after = matching.check(model(spec), runtime([stricter])).compatible

    assert after <= before


@settings(max_examples=100, deadline=None)
@given(model_specs(), runtimes())
def test_applying_the_planned_patch_makes_the_model_pass_whenever_nothing_blocks(
    spec: dict[str, Any], runtime_obj: dict[str, Any]
) -> None:
    model_obj = model(spec)

    plan = matching.pipeline_patch(model_obj, runtime_obj)

    if plan.blocked:
        assert plan.patch is None
        return
    patched = matching.merge_patch(model_obj, plan.patch) if plan.patch else model_obj
    assert matching.check(patched, runtime_obj).compatible


@settings(max_examples=100, deadline=None)
@given(model_specs(), runtimes())
def test_a_planned_patch_only_adds_to_the_recorded_pipeline(spec: dict[str, Any], runtime_obj: dict[str, Any]) -> None:
    plan = matching.pipeline_patch(model(spec), runtime_obj)

    if plan.patch is None or "diffusionPipeline" not in spec:
        return
    patched = matching.merge_patch(model(spec), plan.patch)["spec"]["diffusionPipeline"]
    recorded = spec["diffusionPipeline"]
    for key, value in recorded.items():
        if isinstance(value, dict):
            assert all(patched[key].get(field) == item for field, item in value.items() if not isinstance(item, dict))
        else:
            assert patched[key] == value


@settings(max_examples=40, deadline=None)
@given(st.lists(model_specs(), min_size=1, max_size=4), st.lists(runtimes(), min_size=1, max_size=5))
def test_the_grid_gives_exactly_what_check_and_select_give(
    specs: list[dict[str, Any]], runtime_objs: list[dict[str, Any]]
) -> None:
    models = [
        model(spec, name=f"m{index}", namespace="team-a" if index % 2 else None) for index, spec in enumerate(specs)
    ]
    runtime_objs = [
        {**obj, "metadata": {**obj["metadata"], "name": f"rt{index}"}} for index, obj in enumerate(runtime_objs)
    ]

    result = matching.grid(models, runtime_objs)

    for model_obj in models:
        parsed = parse_model(model_obj)
        for runtime_obj in runtime_objs:
            key = parse_runtime(runtime_obj).key
            assert result.check(parsed.key, key) == matching.check(model_obj, runtime_obj)
        for namespace in (None, "team-a", "team-b"):
            expected = matching.select(model_obj, runtime_objs, namespace=namespace).to_dict()
            assert result.select(parsed.key, namespace).to_dict() == expected


@given(model_specs(), runtimes())
def test_check_never_raises_on_well_typed_input_and_its_verdict_agrees_with_its_reasons(
    spec: dict[str, Any], runtime_obj: dict[str, Any]
) -> None:
    report = matching.check(model(spec), runtime_obj)

    assert report.compatible == (report.reasons == ())
    assert len(report.reasons) <= 1
    assert report.to_dict()["compatible"] == report.compatible
