"""Behaviour profiles: "17b77eda" is OME at that commit; the newest adds spec section 10's U1-U3
and the scorer's Sharded skip. Cases of each newer behaviour come from upstream's own tests,
named at each test (repository, path, commit)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matching
from matching.rules import reason_behaviours, runtime_reason

from .strategies import model, model_specs, runtimes

OLD, NEW = "17b77eda", matching.NEWEST_BEHAVIOUR
NS = "team"
NO_PROVIDER = "no model cache provider is configured for sharded model loading"

# sgl-project/ome pkg/runtimeselector/matcher_test.go at 078c923f467715e273d6b3adfee5220e53d38ecf
UPSTREAM_MATCHER_TEST = "sgl-project/ome pkg/runtimeselector/matcher_test.go@078c923f"


def test_the_profiles_and_the_default() -> None:
    assert set(matching.BEHAVIOURS) == {OLD, NEW, "078c923f", "pr603", "pr594"}
    assert matching.DEFAULT_BEHAVIOUR == NEW == "v1.3"
    assert matching.BEHAVIOURS[NEW].to_dict() == matching.OME_BEHAVIOUR
    assert matching.BEHAVIOURS[OLD].commit == "17b77edad23bae262e0c9adb7f12039397a5d33d"
    assert matching.BEHAVIOURS[OLD].changes == frozenset()
    assert {"U1", "U2", "U3", "U3s", "U4", "U5", "U7c", "U9", "PVC", "modes"} <= matching.BEHAVIOURS[NEW].changes
    assert "U7" not in matching.BEHAVIOURS[NEW].changes  # spec 10.7: U7 is the 485b7933 proposal
    assert matching.changes_between(OLD, NEW)[:4] == ["U1", "U2", "U3", "U3s"]


def test_proposals_are_flagged_and_never_the_default_or_a_release() -> None:
    proposals = {name for name, profile in matching.BEHAVIOURS.items() if profile.proposal}
    assert proposals == {"078c923f", "pr603", "pr594"}
    assert matching.DEFAULT_BEHAVIOUR not in proposals
    assert matching.NEWEST_BEHAVIOUR not in proposals
    assert not proposals & set(matching.RELEASES.values())
    assert matching.RELEASED == (OLD, NEW)
    assert "485b7933" in matching.BEHAVIOURS["078c923f"].summary
    assert matching.changes_between(NEW, "078c923f") == ["U7", "U7c", "PVC"]
    assert matching.changes_between(NEW, "pr603") == ["P603"]
    assert matching.changes_between(NEW, "pr594") == ["P594"]


def test_release_names_resolve_to_their_profiles() -> None:
    # ome-docs src/lib/content/getting-started/install.md: "The commands install v1.2.2, the
    # latest release. The features marked Since v1.3 ... are in main but not yet in a release."
    assert matching.as_behaviour("v1.2.2").name == OLD
    assert matching.as_behaviour("v0.1.5").name == OLD
    assert matching.as_behaviour("v1.3").name == NEW


def test_an_unknown_profile_name_is_a_clear_error(k) -> None:
    with pytest.raises(ValueError, match=r"unknown OME behaviour 'v9': expected one of 17b77eda, v1\.3, 078c923f"):
        matching.check(k.llama(), k.csr("rt", k.llama_entry()), behaviour="v9")


def test_every_result_names_its_profile(k) -> None:
    llama, runtime = k.llama(), k.csr("rt", k.llama_entry())
    assert matching.check(llama, runtime, behaviour=OLD).to_dict()["behaviour"] == OLD
    assert matching.check(llama, runtime).to_dict()["behaviour"] == NEW
    assert matching.select(llama, [runtime], behaviour=OLD).to_dict()["behaviour"] == OLD
    assert matching.pipeline_patch(llama, runtime, behaviour=matching.BEHAVIOURS[OLD]).to_dict()["behaviour"] == OLD
    assert matching.grid([llama], [runtime], behaviour=OLD).behaviour.name == OLD


# --- U1: one-bound size ranges -------------------------------------------------------------------


PARTIAL_BOUNDS = [  # TestModelSizeRangePartialBounds, UPSTREAM_MATCHER_TEST
    pytest.param({"min": "1B"}, "7B", True, id="only Min set, model above min"),
    pytest.param({"min": "10B"}, "7B", False, id="only Min set, model below min"),
    pytest.param({"min": "7B"}, "7B", True, id="only Min set, model at min boundary"),
    pytest.param({"max": "13B"}, "7B", True, id="only Max set, model below max"),
    pytest.param({"max": "3B"}, "7B", False, id="only Max set, model above max"),
    pytest.param({"max": "7B"}, "7B", True, id="only Max set, model at max boundary"),
    pytest.param({"min": "1B", "max": "13B"}, "7B", True, id="both bounds set, model in range"),
    pytest.param({"min": "1B", "max": "5B"}, "7B", False, id="both bounds set, model out of range"),
    pytest.param({}, "7B", True, id="neither bound set, always in range"),
]


def _pytorch(k, size: str) -> tuple[dict[str, Any], dict[str, Any]]:
    model_obj = k.model("m", modelFormat=k.ref("pytorch"), modelParameterSize=size)
    return model_obj, {"modelFormat": k.ref("pytorch"), "autoSelect": True}


@pytest.mark.parametrize(("size_range", "size", "compatible"), PARTIAL_BOUNDS)
def test_u1_newer_ome_treats_a_missing_bound_as_open(k, size_range, size, compatible) -> None:
    model_obj, entry = _pytorch(k, size)
    runtime = k.csr("rt", entry, modelSizeRange=size_range)

    report = matching.check(model_obj, runtime, behaviour=NEW)
    grid = matching.grid([model_obj], [runtime], behaviour=NEW)

    assert (report.compatible, report.error) == (compatible, None)
    assert grid.verdict(("ClusterBaseModel", "", "m"), ("ClusterServingRuntime", "", "rt"))[0] is compatible


@pytest.mark.parametrize(("size_range", "size", "compatible"), PARTIAL_BOUNDS)
def test_u1_ome_17b77eda_crashes_on_any_range_without_both_bounds(k, size_range, size, compatible) -> None:
    model_obj, entry = _pytorch(k, size)
    runtime = k.csr("rt", entry, modelSizeRange=size_range)
    complete = "min" in size_range and "max" in size_range

    report = matching.check(model_obj, runtime, behaviour=OLD)
    selection = matching.select(model_obj, [runtime], behaviour=OLD)

    if complete:
        assert (report.compatible, report.error) == (compatible, None)
        return
    crash = "OME 17b77eda crashes (nil pointer dereference) on runtime rt: its modelSizeRange "
    assert report.compatible is False
    assert report.reasons == ()
    assert report.error is not None
    assert report.error.startswith(crash)
    assert (selection.selected, selection.error) == (None, report.error)
    assert matching.validate("rt", model_obj, [runtime], namespace=NS, behaviour=OLD) == report.error
    grid = matching.grid([model_obj], [runtime], behaviour=OLD)
    assert grid.select(("ClusterBaseModel", "", "m")).error == report.error


def test_u1_17b77eda_does_not_crash_when_no_entry_passes_or_the_model_has_no_size(k) -> None:
    # OME reaches the size check only after a passing entry, and only for a sized model.
    model_obj, entry = _pytorch(k, "7B")
    wrong = k.csr("rt", {"modelFormat": k.ref("onnx"), "autoSelect": True}, modelSizeRange={"min": "1B"})
    unsized = k.model("m", modelFormat=k.ref("pytorch"))
    half_open = k.csr("rt", entry, modelSizeRange={"min": "1B"})

    assert matching.check(model_obj, wrong, behaviour=OLD).error is None
    assert matching.check(unsized, half_open, behaviour=OLD).compatible is True


@pytest.mark.parametrize(  # TestCalculateSizeScorePartialBounds, UPSTREAM_MATCHER_TEST
    ("size_range", "distance"),
    [({"min": "1B"}, 6e9), ({"max": "13B"}, 6e9), ({"min": "1B", "max": "13B"}, 12e9), ({}, 0.0)],
)
def test_u1_the_size_score_counts_only_the_bounds_that_are_set(k, size_range, distance) -> None:
    runtime = matching.parse_runtime(k.csr("rt", k.llama_entry(), modelSizeRange=size_range))
    assert matching.size_score(7e9, runtime) == distance


# --- U2: deployment mode -------------------------------------------------------------------------


def _mode_runtime(k, engine: str | None = None, decoder: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if engine is not None:
        spec["engineConfig"] = {"annotations": {"ome.io/deploymentMode": engine}}
    if decoder is not None:
        spec["decoderConfig"] = {"annotations": {"ome.io/deploymentMode": decoder}}
    return k.csr("rt", {"modelFormat": k.ref("pytorch", weight=10), "autoSelect": True}, **spec)


def _mode_isvc(k, engine: str | None = None, decoder: str | None = None, **spec: Any) -> dict[str, Any]:
    if engine is not None:
        spec["engine"] = {"annotations": {"ome.io/deploymentMode": engine}}
    if decoder is not None:
        spec["decoder"] = {"annotations": {"ome.io/deploymentMode": decoder}}
    return k.isvc(**spec)


@pytest.mark.parametrize(  # TestGetCompatibilityDetails_DeploymentMode, UPSTREAM_MATCHER_TEST
    ("runtime_modes", "isvc_modes", "reason"),
    [
        pytest.param({"engine": "MultiNode"}, {"engine": ""}, None, id="empty isvc engine mode is not used"),
        pytest.param({"engine": "MultiNode"}, {"engine": "MultiNode"}, None, id="engine modes match"),
        pytest.param({"engine": "MultiNode"}, {"engine": "InvalidMode"}, None, id="invalid isvc mode is not used"),
        pytest.param({"engine": "MultiNode"}, {"engine": "RawDeployment"}, "engine", id="engine modes differ"),
        pytest.param({"decoder": "MultiNode"}, {"decoder": "MultiNode"}, None, id="decoder modes match"),
        pytest.param({"decoder": "RawDeployment"}, {"decoder": "MultiNode"}, "decoder", id="decoder modes differ"),
        pytest.param(
            {"engine": "MultiNode", "decoder": "RawDeployment"},
            {"engine": "MultiNode", "decoder": "MultiNode"},
            "decoder",
            id="decoder mismatch even if engine matches",
        ),
        pytest.param(
            {"engine": "MultiNode"}, {"deploymentMode": "RawDeployment"}, "engine", id="typed field declares engine"
        ),
        pytest.param(
            {"engine": "MultiNode"},
            {"engine": "MultiNode", "deploymentMode": "RawDeployment"},
            None,
            id="component annotation overrides the typed field",
        ),
        pytest.param({"decoder": "MultiNode"}, {"deploymentMode": "RawDeployment"}, None, id="typed field, no decoder"),
    ],
)
def test_u2_the_deployment_mode_check(k, runtime_modes, isvc_modes, reason) -> None:
    model_obj = k.model("m", modelFormat=k.ref("pytorch"))
    runtime = _mode_runtime(k, **runtime_modes)
    service = _mode_isvc(k, **isvc_modes)

    newer = matching.check(model_obj, runtime, service, behaviour=NEW)
    older = matching.check(model_obj, runtime, service, behaviour=OLD)

    assert newer.compatible is (reason is None)
    if reason is not None:
        assert f"{reason} deployment mode" in newer.reasons[0]
    assert older.compatible is True  # 17b77eda has no deployment-mode check


def test_u2_omenative_is_a_mode_only_newer_ome_knows(k) -> None:
    # pkg/constants/constants.go: DeploymentModeType.IsValid at 17b77eda lists Serverless, RawDeployment,
    # MultiNodeRayVLLM, MultiNode and VirtualDeployment; the newer one RawDeployment, MultiNode,
    # VirtualDeployment and OMENative.
    assert "OMENative" in matching.BEHAVIOURS[NEW].deployment_modes
    assert "OMENative" not in matching.BEHAVIOURS[OLD].deployment_modes
    report = matching.check(
        k.model("m", modelFormat=k.ref("pytorch")), _mode_runtime(k, engine="MultiNode"), _mode_isvc(k, "OMENative")
    )
    assert report.reasons == (
        "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative",
    )


# --- U3: Sharded models and the scorer's skip ----------------------------------------------------


def _sharded(k) -> dict[str, Any]:
    # TestResolveModelAndRuntime_ExplicitShardedRuntimeRequiresConfiguredCacheProvider,
    # sgl-project/ome pkg/webhook/admission/isvc/inference_service_validation_test.go@14fd903c
    return k.model("sharded-model", namespace="default", distribution="Sharded", modelFormat=k.ref("safetensors"))


def _cache_runtime(k) -> dict[str, Any]:
    entry = {"modelFormat": k.ref("safetensors"), "modelCacheProviders": ["model_cache"], "autoSelect": True}
    return k.csr("cache-runtime", entry)


def test_u3_newer_ome_rejects_a_sharded_model_without_a_configured_cache_provider(k) -> None:
    newer = matching.validate("cache-runtime", _sharded(k), [_cache_runtime(k)], namespace="default")
    older = matching.validate("cache-runtime", _sharded(k), [_cache_runtime(k)], namespace="default", behaviour=OLD)

    assert newer is not None
    assert NO_PROVIDER in newer
    assert older is None  # 17b77eda has no distribution field: the model matches as any other


def test_u3_the_scorer_gives_0_to_formats_failing_the_cache_provider_test(k) -> None:
    # sgl-project/ome pkg/runtimeselector/scorer.go@078c923f: CalculateScore and CalculateFormatScore
    # skip a format that fails modelRequiresCacheProvider / supportedFormatSupportsModelCacheProvider.
    model_obj, runtime = _sharded(k), _cache_runtime(k)
    parsed_model, parsed_runtime = matching.parse_model(model_obj), matching.parse_runtime(runtime)

    assert matching.score(model_obj, runtime) == 0
    assert matching.check(model_obj, runtime).score == 0
    assert matching.entry_score(parsed_model, parsed_runtime.entries[0], 1) == 0
    assert matching.score(model_obj, runtime, behaviour=OLD) == 10
    assert matching.check(model_obj, runtime, behaviour=OLD).score == 10
    assert "Sharded" in matching.score_breakdown(parsed_model, parsed_runtime.entries[0])


# --- properties over both profiles ---------------------------------------------------------------


@st.composite
def sharded_or_not(draw: st.DrawFn) -> dict[str, Any]:
    spec = draw(model_specs())
    distribution = draw(st.sampled_from([None, "PerNode", "Sharded"]))
    return spec if distribution is None else {**spec, "distribution": distribution}


@settings(max_examples=60, deadline=None)
@given(st.lists(sharded_or_not(), min_size=1, max_size=3), st.lists(runtimes(), min_size=1, max_size=4))
def test_under_17b77eda_the_grid_gives_exactly_what_check_and_select_give(specs, runtime_objs) -> None:
    models = [model(spec, name=f"m{i}", namespace="team-a" if i % 2 else None) for i, spec in enumerate(specs)]
    runtime_objs = [{**obj, "metadata": {**obj["metadata"], "name": f"rt{i}"}} for i, obj in enumerate(runtime_objs)]

    result = matching.grid(models, runtime_objs, behaviour=OLD)

    for model_obj in models:
        key = matching.parse_model(model_obj).key
        for runtime_obj in runtime_objs:
            runtime_key = matching.parse_runtime(runtime_obj).key
            expected = matching.check(model_obj, runtime_obj, behaviour=OLD)
            assert result.check(key, runtime_key) == expected
            assert result.verdict(key, runtime_key)[0] == expected.compatible
            assert (runtime_key in result.panics(key)) == (expected.error is not None)
        for namespace in (None, "team-a", "team-b"):
            wanted = matching.select(model_obj, runtime_objs, namespace=namespace, behaviour=OLD).to_dict()
            assert result.select(key, namespace).to_dict() == wanted


@settings(max_examples=150, deadline=None)
@given(sharded_or_not(), runtimes())
def test_a_reason_text_differs_between_profiles_only_through_the_behaviours_it_depends_on(spec, runtime_obj) -> None:
    parsed_model, parsed_runtime = matching.parse_model(model(spec)), matching.parse_runtime(runtime_obj)
    texts = {name: runtime_reason(parsed_model, parsed_runtime, None, matching.BEHAVIOURS[name]) for name in (OLD, NEW)}
    if not reason_behaviours(parsed_model, parsed_runtime):
        assert texts[OLD] == texts[NEW]


@given(sharded_or_not(), runtimes(), st.sampled_from([OLD, NEW]))
def test_a_verdict_agrees_with_its_reasons_and_error(spec, runtime_obj, behaviour) -> None:
    report = matching.check(model(spec), runtime_obj, behaviour=behaviour)

    assert report.compatible == (report.reasons == () and report.error is None)
    assert not (report.reasons and report.error)
