"""Conformance: the newer behaviour of section 10 that the port follows: U1 (one-bound size
ranges), U2 (deployment mode with an InferenceService), U3 (Sharded models).
"""

from __future__ import annotations

import pytest

import matching

NS = "team"
NO_SIZE = "model does not specify size, but runtime has size constraints"
SHARDED = "no model cache provider is configured for sharded model loading"


# --- U1 --------------------------------------------------------------------------------------------


def ranged(k, size, size_range, name="rt"):
    return matching.check(k.llama(modelParameterSize=size), k.csr(name, k.llama_entry(), modelSizeRange=size_range))


@pytest.mark.parametrize(
    ("size", "size_range", "compatible"),
    [
        pytest.param("7B", {"min": "1B"}, True, id="min-only-above"),
        pytest.param("1B", {"min": "1B"}, True, id="min-only-inclusive"),
        pytest.param("1000T", {"min": "1B"}, True, id="min-only-no-upper-bound"),
        pytest.param("7B", {"max": "13B"}, True, id="max-only-below"),
        pytest.param("13B", {"max": "13B"}, True, id="max-only-inclusive"),
        pytest.param("1", {"max": "13B"}, True, id="max-only-no-lower-bound"),
        pytest.param("7B", {}, True, id="empty-range-admits-everything"),
        pytest.param("7b", {}, True, id="empty-range-admits-unparsable"),
        pytest.param("0.5B", {"min": "1B"}, False, id="min-only-below"),
        pytest.param("70B", {"max": "13B"}, False, id="max-only-above"),
    ],
)
def test_u1_a_missing_bound_is_no_limit(k, size, size_range, compatible):
    assert ranged(k, size, size_range).compatible is compatible


def test_u1_min_only_reason_prints_an_open_upper_end(k):
    assert ranged(k, "0.5B", {"min": "1B"}).reasons == ("model size 0.5B is outside supported range [1B, inf)",)


def test_u1_max_only_reason_prints_an_open_lower_end(k):
    assert ranged(k, "70B", {"max": "13B"}).reasons == ("model size 70B is outside supported range (-inf, 13B]",)


def test_u1_the_both_bounds_text_is_unchanged(k):
    assert ranged(k, "8B", {"min": "10B", "max": "70B"}).reasons == (
        "model size 8B is outside supported range [10B, 70B]",
    )


def test_u1_min_above_max_rejects_every_sized_model(k):
    assert ranged(k, "8B", {"min": "9B", "max": "7B"}).reasons == ("model size 8B is outside supported range [9B, 7B]",)


def test_u1_null_bound_is_absent(k):
    assert ranged(k, "70B", {"min": None, "max": "13B"}).reasons == (
        "model size 70B is outside supported range (-inf, 13B]",
    )


def test_u1_an_unparsable_min_only_is_zero(k):
    assert ranged(k, "7b", {"min": "1B"}).reasons == ("model size 7b is outside supported range [1B, inf)",)


@pytest.mark.parametrize("size_range", [{"min": "1B"}, {"max": "13B"}, {}], ids=["min-only", "max-only", "empty"])
def test_u1_a_model_without_size_against_a_one_bound_range_is_warned(k, size_range):
    report = matching.check(k.llama(), k.csr("rt", k.llama_entry(), modelSizeRange=size_range))
    assert report.compatible is True
    assert report.warnings == (NO_SIZE,)


def test_u1_validate_reports_the_open_interval(k):
    rt = k.csr("rt", k.llama_entry(), modelSizeRange={"min": "10B"})
    err = matching.validate("rt", k.llama(modelParameterSize="8B"), [rt], namespace=NS)
    assert err == "runtime rt does not support model safetensors: model size 8B is outside supported range [10B, inf)"


def test_u1_size_scores_count_only_the_bounds_that_are_set(k):
    # 7B: {} -> 0, {min: 1B} -> 6e9, {max: 13B} -> 6e9, [1B, 13B] -> 12e9; no range -> 0.
    model = k.llama(modelParameterSize="7B")
    rts = [
        k.csr("a-both", k.llama_entry(), modelSizeRange={"min": "1B", "max": "13B"}),
        k.csr("b-max", k.llama_entry(), modelSizeRange={"max": "13B"}),
        k.csr("c-min", k.llama_entry(), modelSizeRange={"min": "1B"}),
        k.csr("d-empty", k.llama_entry(), modelSizeRange={}),
        k.csr("e-none", k.llama_entry()),
    ]
    order = [m.name for m in matching.select(model, rts, namespace=NS).compatible]
    assert order == ["d-empty", "e-none", "b-max", "c-min", "a-both"]


def test_u1_a_closer_single_bound_beats_a_farther_one(k):
    model = k.llama(modelParameterSize="7B")
    near = k.csr("z-near", k.llama_entry(), modelSizeRange={"min": "6B"})
    far = k.csr("a-far", k.llama_entry(), modelSizeRange={"max": "70B"})
    assert [m.name for m in matching.select(model, [far, near], namespace=NS).compatible] == ["z-near", "a-far"]


# --- U2 deployment mode -----------------------------------------------------------------------------


def engine_mode(mode):
    return {"engineConfig": {"annotations": {"ome.io/deploymentMode": mode}}}


def decoder_mode(mode):
    return {"decoderConfig": {"annotations": {"ome.io/deploymentMode": mode}}}


def svc_engine(k, mode, **spec):
    return k.isvc(engine={"annotations": {"ome.io/deploymentMode": mode}}, **spec)


ENGINE_MISMATCH = "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative"


def test_u2_differing_engine_modes_make_the_runtime_incompatible(k):
    rt = k.csr("rt", k.llama_entry(), **engine_mode("MultiNode"))
    report = matching.check(k.llama(), rt, svc_engine(k, "OMENative"))
    assert report.compatible is False
    assert report.reasons == (ENGINE_MISMATCH,)


def test_u2_differing_decoder_modes_make_the_runtime_incompatible(k):
    rt = k.csr("rt", k.llama_entry(), **decoder_mode("RawDeployment"))
    svc = k.isvc(decoder={"annotations": {"ome.io/deploymentMode": "MultiNode"}})
    assert matching.check(k.llama(), rt, svc).reasons == (
        "runtime decoder deployment mode RawDeployment does not match requested decoder deployment mode MultiNode",
    )


def test_u2_equal_modes_pass(k):
    rt = k.csr("rt", k.llama_entry(), **engine_mode("MultiNode"))
    assert matching.check(k.llama(), rt, svc_engine(k, "MultiNode")).compatible is True


def test_u2_without_an_inference_service_the_mode_is_not_checked(k):
    rt = k.csr("rt", k.llama_entry(), **engine_mode("MultiNode"))
    assert matching.check(k.llama(), rt).compatible is True


def test_u2_the_typed_deployment_mode_field_counts_for_the_engine(k):
    rt = k.csr("rt", k.llama_entry(), **engine_mode("MultiNode"))
    svc = k.isvc(deploymentMode="RawDeployment")
    assert matching.check(k.llama(), rt, svc).reasons == (
        "runtime engine deployment mode MultiNode does not match requested engine deployment mode RawDeployment",
    )


def test_u2_the_engine_annotation_wins_over_the_typed_field(k):
    rt = k.csr("rt", k.llama_entry(), **engine_mode("MultiNode"))
    svc = svc_engine(k, "MultiNode", deploymentMode="RawDeployment")
    assert matching.check(k.llama(), rt, svc).compatible is True


def test_u2_the_typed_field_does_not_constrain_the_decoder_without_a_decoder(k):
    rt = k.csr("rt", k.llama_entry(), **decoder_mode("MultiNode"))
    svc = k.isvc(deploymentMode="RawDeployment")
    assert matching.check(k.llama(), rt, svc).compatible is True


def test_u2_the_inference_services_metadata_annotation_is_ignored(k):
    rt = k.csr("rt", k.llama_entry(), **engine_mode("MultiNode"))
    svc = k.isvc(annotations={"ome.io/deploymentMode": "OMENative"})
    assert matching.check(k.llama(), rt, svc).compatible is True


def test_u2_the_runtimes_metadata_annotation_is_ignored(k):
    rt = k.csr("rt", k.llama_entry())
    rt["metadata"]["annotations"] = {"ome.io/deploymentMode": "MultiNode"}
    assert matching.check(k.llama(), rt, svc_engine(k, "OMENative")).compatible is True


def test_u2_router_config_annotations_are_ignored(k):
    rt = k.csr("rt", k.llama_entry(), routerConfig={"annotations": {"ome.io/deploymentMode": "MultiNode"}})
    assert matching.check(k.llama(), rt, svc_engine(k, "OMENative")).compatible is True


@pytest.mark.parametrize("value", ["multinode", "Foo", ""], ids=["wrong-case", "unknown", "empty"])
def test_u2_unknown_modes_count_as_no_mode(k, value):
    rt = k.csr("rt", k.llama_entry(), **engine_mode(value))
    assert matching.check(k.llama(), rt, svc_engine(k, "OMENative")).compatible is True


def test_u2_the_mode_is_checked_after_the_accelerator(k):
    rt = k.csr(
        "rt", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["A100"]}, **engine_mode("MultiNode")
    )
    svc = svc_engine(k, "OMENative")
    svc["metadata"]["annotations"] = {"ome.io/accelerator-class": "H100"}
    assert matching.check(k.llama(), rt, svc).reasons == ("runtime does not support the required accelerator class",)


def test_u2_the_mode_is_checked_before_the_formats(k):
    rt = k.csr("rt", k.llama_entry(modelArchitecture="X"), **engine_mode("MultiNode"))
    assert matching.check(k.llama(), rt, svc_engine(k, "OMENative")).reasons == (ENGINE_MISMATCH,)


def test_u2_disabled_is_still_checked_first(k):
    rt = k.csr("rt", k.llama_entry(), disabled=True, **engine_mode("MultiNode"))
    assert matching.check(k.llama(), rt, svc_engine(k, "OMENative")).reasons == ("runtime is disabled",)


def test_u2_the_docs_example_error(k):
    multinode = k.csr("srt-llama-3-3-70b-instruct-multinode", k.llama_entry(), **engine_mode("MultiNode"))
    manual = k.csr("srt-llama-3-3-70b-instruct", k.llama_entry(autoSelect=False))
    svc = svc_engine(
        k,
        "OMENative",
    )
    svc["metadata"]["namespace"] = "llama-demo"
    sel = matching.select(k.llama(), [multinode, manual], isvc=svc)
    assert sel.error == (
        "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 "
        "runtimes (0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-llama-3-3-70b-instruct-multinode "
        "(runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative)"
    )


def test_u2_validate_prints_an_empty_model_name_like_the_accelerator_case(k):
    rt = k.csr("srt-llama-3-3-70b-instruct-multinode", k.llama_entry(), **engine_mode("MultiNode"))
    err = matching.validate("srt-llama-3-3-70b-instruct-multinode", k.llama(), [rt], isvc=svc_engine(k, "OMENative"))
    assert err == (
        "runtime srt-llama-3-3-70b-instruct-multinode does not support model : runtime engine deployment mode "
        "MultiNode does not match requested engine deployment mode OMENative"
    )


# --- U3 Sharded -------------------------------------------------------------------------------------------


def test_u3_a_sharded_model_fails_an_otherwise_matching_entry_with_the_provider_reason(k):
    report = matching.check(k.llama(distribution="Sharded"), k.csr("rt", k.llama_entry()))
    assert report.compatible is False
    assert report.entries[0].mismatch == SHARDED
    assert report.reasons == (f"model format '{k.LLAMA_LABEL}' not in supported formats: {SHARDED}",)


def test_u3_listing_the_provider_does_not_help_while_none_is_configured(k):
    rt = k.csr("rt", k.llama_entry(modelCacheProviders=["model_cache"]))
    assert matching.check(k.llama(distribution="Sharded"), rt).reasons == (
        f"model format '{k.LLAMA_LABEL}' not in supported formats: {SHARDED}",
    )


def test_u3_the_provider_phrase_comes_first_in_the_entry_text(k):
    rt = k.csr("rt", k.llama_entry(modelArchitecture="MistralForCausalLM"))
    report = matching.check(k.llama(distribution="Sharded"), rt)
    assert (
        report.entries[0].mismatch
        == f"{SHARDED}, architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)"
    )


def test_u3_the_provider_check_comes_before_the_pipeline(k):
    rt = k.csr("rt", k.llama_entry(diffusionPipeline={}))
    report = matching.check(k.llama(distribution="Sharded"), rt)
    assert report.entries[0].mismatch.startswith(
        SHARDED + ", diffusion pipeline required by runtime but not specified in model"
    )


@pytest.mark.parametrize("distribution", ["PerNode", None], ids=["PerNode", "null"])
def test_u3_per_node_and_absent_distribution_behave_as_before(k, distribution):
    assert matching.check(k.llama(distribution=distribution), k.csr("rt", k.llama_entry())).compatible is True


def test_u3_a_sharded_model_is_never_auto_selected(k):
    sel = matching.select(k.llama(distribution="Sharded"), [k.csr("rt", k.llama_entry())], namespace=NS)
    assert sel.selected is None
    assert sel.excluded == {"rt": f"model format '{k.LLAMA_LABEL}' not in supported formats: {SHARDED}"}


def test_u3_a_named_runtime_also_fails_for_a_sharded_model(k):
    err = matching.validate("rt", k.llama(distribution="Sharded"), [k.csr("rt", k.llama_entry())], namespace=NS)
    assert (
        err
        == f"runtime rt does not support model safetensors: model format '{k.LLAMA_LABEL}' not in supported formats: {SHARDED}"
    )
