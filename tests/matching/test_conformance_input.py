"""Conformance: input handling. Structurally malformed manifests raise ManifestError naming
the object and the field; values OME accepts but cannot match do not raise (sections 1.5-1.6,
2.5, 2.6, 3.3, 5.2). Also the absent/present edge cases of section 1.6.
"""

from __future__ import annotations

import pytest

import matching

NS = "team"


# --- malformed manifests ---------------------------------------------------------------------------


MODEL_BREAKAGE = [
    pytest.param(lambda s: [], "spec", id="spec-is-a-list"),
    pytest.param(lambda s: "text", "spec", id="spec-is-a-string"),
    pytest.param(
        lambda s: {**s, "modelArchitecture": ["LlamaForCausalLM"]}, "modelArchitecture", id="architecture-is-a-list"
    ),
    pytest.param(lambda s: {**s, "quantization": 8}, "quantization", id="quantization-is-a-number"),
    pytest.param(
        lambda s: {**s, "modelFormat": {"name": "safetensors", "version": 1.0}},
        "version",
        id="format-version-is-a-yaml-float",
    ),
    pytest.param(
        lambda s: {**s, "modelFormat": {"name": "safetensors", "version": 1}},
        "version",
        id="format-version-is-a-yaml-int",
    ),
    pytest.param(
        lambda s: {**s, "modelFramework": {"name": "transformers", "version": 4.51}},
        "version",
        id="framework-version-is-a-yaml-float",
    ),
    pytest.param(lambda s: {**s, "modelFormat": "safetensors"}, "modelFormat", id="format-is-a-string"),
    pytest.param(lambda s: {**s, "modelFormat": {"name": ["safetensors"]}}, "name", id="format-name-is-a-list"),
    pytest.param(lambda s: {**s, "modelParameterSize": 8}, "modelParameterSize", id="size-is-a-number"),
    pytest.param(lambda s: {**s, "diffusionPipeline": ["x"]}, "diffusionPipeline", id="pipeline-is-a-list"),
    pytest.param(lambda s: {**s, "diffusionPipeline": {"className": 3}}, "className", id="pipeline-class-is-a-number"),
    pytest.param(lambda s: {**s, "diffusionPipeline": {"vae": "diffusers"}}, "vae", id="component-is-a-string"),
    pytest.param(
        lambda s: {**s, "diffusionPipeline": {"vae": {"library": 1}}}, "library", id="component-library-is-a-number"
    ),
    pytest.param(
        lambda s: {**s, "diffusionPipeline": {"additionalComponents": [{"library": "x"}]}},
        "additionalComponents",
        id="additional-components-is-a-list",
    ),
]


@pytest.mark.parametrize(("breakage", "field"), MODEL_BREAKAGE)
def test_a_malformed_model_raises_a_manifest_error_naming_object_and_field(k, breakage, field):
    model = k.llama("broken-model")
    model["spec"] = breakage(model["spec"])
    with pytest.raises(matching.ManifestError) as info:
        matching.check(model, k.csr("rt", k.llama_entry()))
    message = str(info.value)
    assert "broken-model" in message
    assert field in message


RUNTIME_BREAKAGE = [
    pytest.param(
        {"supportedModelFormats": {"modelFormat": {"name": "x"}}}, "supportedModelFormats", id="formats-is-a-mapping"
    ),
    pytest.param({"supportedModelFormats": ["safetensors"]}, "supportedModelFormats", id="entry-is-a-string"),
    pytest.param(
        {"supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "priority": "2"}]},
        "priority",
        id="priority-is-a-string",
    ),
    pytest.param(
        {"supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "autoSelect": "yes"}]},
        "autoSelect",
        id="autoSelect-is-a-string",
    ),
    pytest.param(
        {"supportedModelFormats": [{"modelFormat": {"name": "safetensors", "weight": "1"}}]},
        "weight",
        id="weight-is-a-string",
    ),
    pytest.param(
        {"supportedModelFormats": [{"modelFormat": {"name": "safetensors", "version": 1.0}}]},
        "version",
        id="entry-version-is-a-yaml-float",
    ),
    pytest.param(
        {"supportedModelFormats": [{"modelFormat": {"name": "safetensors", "operator": ["Equal"]}}]},
        "operator",
        id="operator-is-a-list",
    ),
    pytest.param(
        {"supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "modelArchitecture": ["A"]}]},
        "modelArchitecture",
        id="entry-architecture-is-a-list",
    ),
    pytest.param({"disabled": "true"}, "disabled", id="disabled-is-a-string"),
    pytest.param({"modelSizeRange": {"min": 7, "max": "9B"}}, "min", id="size-min-is-a-number"),
    pytest.param({"modelSizeRange": ["7B", "9B"]}, "modelSizeRange", id="size-range-is-a-list"),
    pytest.param(
        {"acceleratorRequirements": {"acceleratorClasses": "H100"}},
        "acceleratorClasses",
        id="accelerator-classes-is-a-string",
    ),
]


@pytest.mark.parametrize(("spec", "field"), RUNTIME_BREAKAGE)
def test_a_malformed_runtime_raises_a_manifest_error_naming_object_and_field(k, spec, field):
    rt = k.csr("broken-rt", **spec)
    with pytest.raises(matching.ManifestError) as info:
        matching.check(k.llama(), rt)
    message = str(info.value)
    assert "broken-rt" in message
    assert field in message


def test_a_malformed_runtime_spec_raises(k):
    rt = k.csr("broken-rt")
    rt["spec"] = ["not", "a", "mapping"]
    with pytest.raises(matching.ManifestError) as info:
        matching.check(k.llama(), rt)
    assert "broken-rt" in str(info.value)
    assert "spec" in str(info.value)


def test_select_raises_on_a_malformed_runtime_among_good_ones(k):
    bad = k.csr("broken-rt", k.llama_entry(priority="high"))
    with pytest.raises(matching.ManifestError) as info:
        matching.select(k.llama(), [k.csr("good", k.llama_entry()), bad], namespace=NS)
    assert "broken-rt" in str(info.value)
    assert "priority" in str(info.value)


def test_score_raises_on_a_malformed_model(k):
    model = k.llama("broken-model", modelFormat={"name": "safetensors", "version": 1.0})
    with pytest.raises(matching.ManifestError):
        matching.score(model, k.csr("rt", k.llama_entry()))


def test_the_manifest_error_is_a_value_error(k):
    model = k.llama("broken-model")
    model["spec"] = []
    with pytest.raises(ValueError, match="spec"):
        matching.check(model, k.csr("rt"))


# --- accepted but unmatchable values ---------------------------------------------------------------


def test_version_latest_does_not_raise_and_mismatches(k):
    model = k.llama(modelFormat=k.ref("safetensors", "latest"))
    report = matching.check(model, k.csr("rt", k.llama_entry()))
    assert report.reasons == (
        "model format 'mt:safetensors:latest:LlamaForCausalLM:transformers:4.51.0' not in supported formats: "
        "format version mismatch (model=latest, runtime=1.0.0)",
    )


def test_operator_foo_does_not_raise(k):
    e = k.llama_entry(modelFormat=k.ref("safetensors", "1.0.0", "Foo"))
    assert matching.check(k.llama(), k.csr("rt", e)).compatible is True


def test_operator_greaterthan_lowercase_is_unknown_and_behaves_like_equal(k):
    e = k.llama_entry(modelFramework=k.ref("transformers", "4.52.0", "greaterthan"))
    assert matching.check(k.llama(), k.csr("rt", e)).reasons == (
        f"model format '{k.LLAMA_LABEL}' not in supported formats: framework version mismatch (model=4.51.0, runtime=4.52.0)",
    )


def test_size_7b_does_not_raise_and_fails_a_positive_range(k):
    model = k.llama(modelParameterSize="7b")
    rt = k.csr("rt", k.llama_entry(), modelSizeRange={"min": "1B", "max": "70B"})
    assert matching.check(model, rt).reasons == ("model size 7b is outside supported range [1B, 70B]",)


def test_a_range_bound_7b_does_not_raise(k):
    rt = k.csr("rt", k.llama_entry(), modelSizeRange={"min": "1B", "max": "7b"})
    assert matching.check(k.llama(modelParameterSize="7B"), rt).reasons == (
        "model size 7B is outside supported range [1B, 7b]",
    )


def test_a_negative_priority_is_accepted_and_scores_0(k):
    rt = k.csr("rt", k.llama_entry(priority=-1))
    assert matching.score(k.llama(), rt) == 0
    assert "rt" in matching.select(k.llama(), [rt], namespace=NS).manual_only


def test_a_null_priority_counts_as_1(k):
    assert matching.score(k.llama(), k.csr("rt", k.llama_entry(priority=None))) == 15


def test_unknown_fields_are_ignored(k):
    e = k.llama_entry(name="deprecated", version="1.0.0", modelType="llama", acceleratorConfig={"x": {}})
    rt = k.csr("rt", e, protocolVersions=["openAI"], engineConfig={"runner": {"image": "x"}})
    assert matching.check(k.llama(modelCapabilities=["TEXT_GENERATION"], maxTokens=8192), rt).compatible is True


# --- section 1.6 and 2.5/2.6 edge cases -------------------------------------------------------------


def test_a_model_without_modelFormat_matches_an_entry_whose_format_name_is_empty(k):
    model = k.model(modelArchitecture="A")
    rt = k.csr("rt", k.entry(modelFormat={"name": ""}, modelArchitecture="A", autoSelect=True))
    assert matching.check(model, rt).compatible is True


def test_but_selection_rejects_that_model_as_invalid(k):
    model = k.model(modelArchitecture="A")
    rt = k.csr("rt", k.entry(modelFormat={"name": ""}, modelArchitecture="A", autoSelect=True))
    assert matching.select(model, [rt], namespace=NS).error == (
        "invalid model specification: modelFormat.name: model format name is required"
    )


def test_an_entry_class_name_of_empty_string_is_a_requirement(k):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline={"vae": {}})
    rt = k.csr("rt", k.entry(modelFormat=k.ref("diffusers"), diffusionPipeline={"className": ""}))
    report = matching.check(model, rt)
    assert report.entries[0].mismatch == "pipeline class mismatch (model=<nil>, runtime=)"


def test_an_entry_class_name_of_empty_string_matches_an_empty_model_class(k):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline={"className": ""})
    rt = k.csr("rt", k.entry(modelFormat=k.ref("diffusers"), diffusionPipeline={"className": ""}, autoSelect=True))
    assert matching.check(model, rt).compatible is True


def test_a_null_entry_component_is_no_requirement(k):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline={})
    rt = k.csr(
        "rt",
        k.entry(
            modelFormat=k.ref("diffusers"),
            diffusionPipeline={"tokenizer": None, "additionalComponents": None},
            autoSelect=True,
        ),
    )
    assert matching.check(model, rt).compatible is True


def test_a_null_model_component_is_missing(k):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline={"tokenizer": None})
    rt = k.csr("rt", k.entry(modelFormat=k.ref("diffusers"), diffusionPipeline={"tokenizer": {}}))
    assert (
        matching.check(model, rt).entries[0].mismatch
        == "component tokenizer required by runtime but not specified in model"
    )


def test_a_null_entry_pipeline_is_absent(k):
    rt = k.csr("rt", k.llama_entry(diffusionPipeline=None))
    assert matching.check(k.llama(), rt).compatible is True


def test_an_empty_model_additional_component_fails_a_required_library(k):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline={"additionalComponents": {"safety_checker": {}}})
    rt = k.csr(
        "rt",
        k.entry(
            modelFormat=k.ref("diffusers"),
            diffusionPipeline={"additionalComponents": {"safety_checker": {"library": "diffusers"}}},
        ),
    )
    assert (
        matching.check(model, rt).entries[0].mismatch == "safety_checker library mismatch (model=, runtime=diffusers)"
    )


def test_an_empty_accelerator_selector_requires_nothing(k):
    svc = k.isvc(acceleratorSelector={}, engine={"acceleratorOverride": {}})
    assert matching.check(k.llama(), k.csr("rt", k.llama_entry()), svc).compatible is True


def test_an_empty_string_accelerator_selector_class_is_a_requirement(k):
    svc = k.isvc(acceleratorSelector={"acceleratorClass": ""})
    rt = k.csr("rt", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["H100"]})
    assert matching.check(k.llama(), rt, svc).reasons == ("runtime does not support the required accelerator class",)


def test_empty_accelerator_requirements_fail_a_required_class(k):
    svc = k.isvc(acceleratorSelector={"acceleratorClass": "H100"})
    rt = k.csr("rt", k.llama_entry(), acceleratorRequirements={})
    assert matching.check(k.llama(), rt, svc).reasons == ("runtime does not support the required accelerator class",)


def test_duplicate_required_classes_count_once(k):
    svc = k.isvc(
        annotations={"ome.io/accelerator-class": "H100"},
        acceleratorSelector={"acceleratorClass": "H100"},
        engine={"acceleratorOverride": {"acceleratorClass": "H100"}},
    )
    rt = k.csr("rt", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["H100"]})
    assert matching.check(k.llama(), rt, svc).compatible is True


def test_an_accelerator_exclusion_shows_in_the_selection_error(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": "H100"})
    sel = matching.select(k.llama(), [k.csr("rt", k.llama_entry())], isvc=svc)
    assert sel.error == (
        "no runtime found to support model safetensors with format safetensors in namespace team. Checked 1 "
        "runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: rt (runtime does not support the "
        "required accelerator class)"
    )


def test_a_zero_score_runtime_is_counted_but_not_listed(k):
    e = k.llama_entry(modelFormat=k.ref("safetensors", "1.0.0", weight=-5))
    sel = matching.select(k.llama(), [k.csr("rt", e)], namespace=NS)
    assert sel.error == (
        "no runtime found to support model safetensors with format safetensors in namespace team. "
        "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped)"
    )


def test_ome_warnings_come_before_any_explanatory_warning(k):
    model = k.llama(modelParameterSize="7b")
    rt = k.csr("rt", k.llama_entry(autoSelect=False), modelSizeRange={"min": "0", "max": "9B"})
    report = matching.check(model, rt)
    assert report.compatible is True
    assert report.warnings[0] == "runtime does not have auto-select enabled for any supported format"
    assert "model does not specify size, but runtime has size constraints" not in report.warnings


def test_an_unparsable_model_size_without_a_range_raises_no_ome_warning(k):
    report = matching.check(k.llama(modelParameterSize="7b"), k.csr("rt", k.llama_entry()))
    assert report.compatible is True
    assert not any(w.startswith("runtime does not") or w.startswith("model does not") for w in report.warnings)


# --- booleans are not integers and integers are not booleans (Go decoding) ----------------------------


@pytest.mark.parametrize(
    ("entry_change", "field"),
    [
        pytest.param({"priority": True}, "priority", id="priority-is-a-bool"),
        pytest.param({"autoSelect": 1}, "autoSelect", id="autoSelect-is-an-int"),
        pytest.param(
            {"modelFormat": {"name": "safetensors", "version": "1.0.0", "weight": True}},
            "weight",
            id="weight-is-a-bool",
        ),
        pytest.param(
            {"modelFormat": {"name": "safetensors", "version": "1.0.0", "weight": 1.5}},
            "weight",
            id="weight-is-a-fraction",
        ),
        pytest.param({"modelFormat": {"name": "safetensors", "version": True}}, "version", id="version-is-a-bool"),
    ],
)
def test_python_bool_int_confusions_are_malformed(k, entry_change, field):
    with pytest.raises(matching.ManifestError) as info:
        matching.check(k.llama(), k.csr("broken-rt", k.llama_entry(**entry_change)))
    assert "broken-rt" in str(info.value)
    assert field in str(info.value)


@pytest.mark.parametrize("value", [1, 0], ids=["one", "zero"])
def test_disabled_as_an_integer_is_malformed(k, value):
    with pytest.raises(matching.ManifestError) as info:
        matching.check(k.llama(), k.csr("broken-rt", k.llama_entry(), disabled=value))
    assert "disabled" in str(info.value)


# --- integer widths (section 1.2: priority is int32, weight is int64) ---------------------------------


@pytest.mark.parametrize(
    ("entry_change", "field"),
    [
        pytest.param({"priority": 2**31}, "priority", id="priority-above-int32"),
        pytest.param({"priority": -(2**31) - 1}, "priority", id="priority-below-int32"),
        pytest.param(
            {"modelFormat": {"name": "safetensors", "version": "1.0.0", "weight": 2**63}},
            "weight",
            id="format-weight-above-int64",
        ),
        pytest.param(
            {"modelFramework": {"name": "transformers", "version": "4.51.0", "weight": -(2**63) - 1}},
            "weight",
            id="framework-weight-below-int64",
        ),
    ],
)
def test_integers_that_do_not_fit_the_go_field_are_malformed(k, entry_change, field):
    with pytest.raises(matching.ManifestError) as info:
        matching.check(k.llama(), k.csr("broken-rt", k.llama_entry(**entry_change)))
    assert "broken-rt" in str(info.value)
    assert field in str(info.value)


def test_the_largest_int32_priority_is_accepted(k):
    assert matching.score(k.llama(), k.csr("rt", k.llama_entry(priority=2**31 - 1))) == 15 * (2**31 - 1)


# --- malformed InferenceService ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        pytest.param({"annotations": ["x"]}, "annotations", id="annotations-is-a-list"),
        pytest.param(
            {"annotations": {"ome.io/accelerator-class": 5}}, "accelerator-class", id="annotation-value-is-a-number"
        ),
        pytest.param(
            {"acceleratorSelector": {"acceleratorClass": ["H100"]}}, "acceleratorClass", id="selector-class-is-a-list"
        ),
        pytest.param({"engine": "x"}, "engine", id="engine-is-a-string"),
    ],
)
def test_a_malformed_inference_service_raises(k, change, field):
    change = dict(change)
    annotations = change.pop("annotations", None)
    svc = k.isvc("broken-svc", annotations=annotations, **change)
    with pytest.raises(matching.ManifestError) as info:
        matching.check(k.llama(), k.csr("rt", k.llama_entry()), svc)
    assert "broken-svc" in str(info.value)
    assert field in str(info.value)


def test_a_null_supported_formats_list_is_absent(k):
    report = matching.check(k.llama(), k.csr("rt", supportedModelFormats=None))
    assert report.reasons == (f"model format '{k.LLAMA_LABEL}' not in supported formats: no supported formats defined",)


def test_scores_wrap_like_go_64_bit_integers(k):
    # Section 1.2: weight is int64 and priority int32, so OME's score arithmetic is 64-bit.
    # (2**63 - 1) * 1 + 5 * 1 wraps to a negative number; the runtime score starts at 0
    # (section 4.2), so OME scores this runtime 0 and never auto-selects it.
    e = k.llama_entry(modelFormat=k.ref("safetensors", "1.0.0", weight=2**63 - 1))
    rt = k.csr("rt", e)
    assert matching.score(k.llama(), rt) == 0
    assert matching.select(k.llama(), [rt], namespace=NS).selected is None
