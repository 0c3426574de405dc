"""Conformance: the matcher (spec sections 1.6 and 2.1-2.8), through `matching.check`.

Every expected text is copied from the spec. Tests are derived from the spec alone.
"""

from __future__ import annotations

import pytest

import matching

NO_AUTO = "runtime does not have auto-select enabled for any supported format"
NO_SIZE = "model does not specify size, but runtime has size constraints"
ACCEL = "runtime does not support the required accelerator class"


def reason_of(report) -> str:
    assert report.compatible is False
    assert len(report.reasons) == 1, report.reasons
    return report.reasons[0]


# --- 2.3 verified examples ------------------------------------------------------------------


FP8_LABEL = "mt:safetensors:1.0.0:LlamaForCausalLM:fp8:transformers:4.51.0"


def test_a_runtime_without_supported_formats_gives_the_verified_no_formats_reason(k):
    model = k.llama(quantization="fp8")
    report = matching.check(model, k.csr("empty"))
    assert reason_of(report) == f"model format '{FP8_LABEL}' not in supported formats: no supported formats defined"


def test_an_empty_supported_formats_list_reads_like_an_absent_one(k):
    model = k.llama(quantization="fp8")
    report = matching.check(model, k.csr("empty", supportedModelFormats=[]))
    assert reason_of(report) == f"model format '{FP8_LABEL}' not in supported formats: no supported formats defined"


def test_the_seed_runtime_rejects_a_model_without_pipeline_with_the_verified_text(k):
    report = matching.check(k.qwen(), k.qwen_pipeline_runtime())
    assert reason_of(report) == (
        "model format 'mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0' not in supported "
        "formats: diffusion pipeline required by runtime but not specified in model"
    )


def test_three_failing_entries_are_joined_with_semicolons_in_entry_order(k):
    model = k.llama(quantization="fp8")
    e1 = k.entry(
        modelFormat=k.ref("pytorch", "2.0.0"),
        modelFramework=k.ref("vllm"),
        modelArchitecture="MistralForCausalLM",
        quantization="int4",
        autoSelect=True,
    )
    e2 = k.entry(
        modelFormat=k.ref("safetensors"),
        modelFramework=k.ref("transformers", "4.50.0"),
        modelArchitecture="LlamaForCausalLM",
        autoSelect=True,
    )
    e3 = k.entry(
        modelFormat=k.ref("safetensors", "1.0.0"),
        modelFramework=k.ref("transformers", "4.50.0", "GreaterThanOrEqual"),
        modelArchitecture="LlamaForCausalLM",
        quantization="fp8",
        autoSelect=True,
    )
    report = matching.check(model, k.csr("three", e1, e2, e3))
    assert reason_of(report) == (
        "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:fp8:transformers:4.51.0' not in supported formats: "
        "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM), quantization mismatch "
        "(model=fp8, runtime=int4), format name mismatch (model=safetensors, runtime=pytorch), framework name "
        "mismatch (model=transformers, runtime=vllm); model has quantization fp8 but runtime has no quantization "
        "requirement, model has format version but runtime has no version requirement, framework version mismatch "
        "(model=4.51.0, runtime=4.50.0); framework version mismatch (model=4.51.0, runtime=4.50.0)"
    )


def test_each_failing_entry_reports_its_own_mismatch_text(k):
    model = k.llama(quantization="fp8")
    e1 = k.entry(
        modelFormat=k.ref("pytorch", "2.0.0"),
        modelFramework=k.ref("vllm"),
        modelArchitecture="MistralForCausalLM",
        quantization="int4",
    )
    e3 = k.entry(
        modelFormat=k.ref("safetensors", "1.0.0"),
        modelFramework=k.ref("transformers", "4.50.0", "GreaterThanOrEqual"),
        modelArchitecture="LlamaForCausalLM",
        quantization="fp8",
    )
    report = matching.check(model, k.csr("two", e1, e3))
    assert [e.passed for e in report.entries] == [False, False]
    assert report.entries[0].mismatch == (
        "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM), quantization mismatch "
        "(model=fp8, runtime=int4), format name mismatch (model=safetensors, runtime=pytorch), framework name "
        "mismatch (model=transformers, runtime=vllm)"
    )
    assert report.entries[1].mismatch == "framework version mismatch (model=4.51.0, runtime=4.50.0)"


def test_the_first_passing_entry_makes_the_runtime_compatible_without_reasons(k):
    bad = k.llama_entry(modelArchitecture="MistralForCausalLM")
    report = matching.check(k.llama(), k.csr("rt", bad, k.llama_entry()))
    assert report.compatible is True
    assert report.reasons == ()
    assert [e.passed for e in report.entries] == [False, True]


# --- 2.3 warnings ---------------------------------------------------------------------------


def test_a_compatible_runtime_with_an_auto_select_entry_has_no_warnings(k):
    report = matching.check(k.llama(), k.csr("rt", k.llama_entry()))
    assert report.compatible is True
    assert report.warnings == ()


@pytest.mark.parametrize("auto", [False, None], ids=["autoSelect-false", "autoSelect-absent"])
def test_a_compatible_runtime_without_auto_select_is_warned(k, auto):
    entry = k.llama_entry(autoSelect=k.DROP if auto is None else auto)
    report = matching.check(k.llama(), k.csr("rt", entry))
    assert report.compatible is True
    assert report.warnings == (NO_AUTO,)


def test_auto_select_on_a_non_matching_entry_silences_the_warning(k):
    other = k.llama_entry(modelArchitecture="MistralForCausalLM", autoSelect=True)
    report = matching.check(k.llama(), k.csr("rt", k.llama_entry(autoSelect=False), other))
    assert report.compatible is True
    assert report.warnings == ()


def test_a_model_without_size_against_a_ranged_runtime_is_warned(k):
    report = matching.check(k.llama(), k.csr("rt", k.llama_entry(), modelSizeRange={"min": "7B", "max": "9B"}))
    assert report.compatible is True
    assert report.warnings == (NO_SIZE,)


def test_both_warnings_come_in_the_spec_order(k):
    rt = k.csr("rt", k.llama_entry(autoSelect=False), modelSizeRange={"min": "7B", "max": "9B"})
    report = matching.check(k.llama(), rt)
    assert report.warnings == (NO_AUTO, NO_SIZE)


def test_an_incompatible_runtime_gets_no_warnings(k):
    rt = k.csr("rt", k.llama_entry(autoSelect=False, modelArchitecture="X"), modelSizeRange={"min": "7B", "max": "9B"})
    report = matching.check(k.llama(), rt)
    assert report.compatible is False
    assert report.warnings == ()


# --- 2.3 steps 1-2: disabled and accelerator ------------------------------------------------


def test_a_disabled_runtime_is_incompatible_with_the_disabled_reason(k):
    report = matching.check(k.llama(), k.csr("rt", k.llama_entry(), disabled=True))
    assert report.reasons == ("runtime is disabled",)
    assert report.compatible is False


def test_disabled_false_does_not_disable(k):
    assert matching.check(k.llama(), k.csr("rt", k.llama_entry(), disabled=False)).compatible is True


def test_disabled_is_reported_before_accelerator_and_format_problems(k):
    rt = k.csr("rt", k.llama_entry(modelArchitecture="X"), disabled=True)
    svc = k.isvc(annotations={"ome.io/accelerator-class": "A100"})
    assert matching.check(k.llama(), rt, svc).reasons == ("runtime is disabled",)


def test_without_an_inference_service_the_accelerator_check_passes(k):
    rt = k.csr("rt", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["H100"]})
    assert matching.check(k.llama(), rt).compatible is True


def test_an_inference_service_without_a_class_passes_a_runtime_that_lists_classes(k):
    rt = k.csr("rt", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["H100"]})
    assert matching.check(k.llama(), rt, k.isvc()).compatible is True


def test_every_required_class_must_be_listed_verified_a100_h100_case(k):
    svc = k.isvc(
        annotations={"ome.io/accelerator-class": "A100"},
        engine={"acceleratorOverride": {"acceleratorClass": "H100"}},
    )
    only_a = k.csr("a", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["A100"]})
    both = k.csr("ab", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["A100", "H100"]})
    assert reason_of(matching.check(k.llama(), only_a, svc)) == ACCEL
    assert matching.check(k.llama(), both, svc).compatible is True


@pytest.mark.parametrize(
    "where",
    ["annotation", "acceleratorSelector", "engine-override", "decoder-override"],
)
def test_each_source_of_a_required_class_counts(k, where):
    spec = {}
    annotations = None
    if where == "annotation":
        annotations = {"ome.io/accelerator-class": "H100"}
    elif where == "acceleratorSelector":
        spec["acceleratorSelector"] = {"acceleratorClass": "H100"}
    elif where == "engine-override":
        spec["engine"] = {"acceleratorOverride": {"acceleratorClass": "H100"}}
    else:
        spec["decoder"] = {"acceleratorOverride": {"acceleratorClass": "H100"}}
    svc = k.isvc(annotations=annotations, **spec)
    a100 = k.csr("a", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["A100"]})
    h100 = k.csr("h", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["H100"]})
    assert reason_of(matching.check(k.llama(), a100, svc)) == ACCEL
    assert matching.check(k.llama(), h100, svc).compatible is True


def test_a_required_class_fails_a_runtime_without_accelerator_requirements(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": "H100"})
    assert reason_of(matching.check(k.llama(), k.csr("rt", k.llama_entry()), svc)) == ACCEL


def test_a_required_class_fails_a_runtime_with_an_empty_class_list(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": "H100"})
    rt = k.csr("rt", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": []})
    assert reason_of(matching.check(k.llama(), rt, svc)) == ACCEL


def test_q24_an_empty_accelerator_annotation_makes_a_listing_runtime_incompatible(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": ""})
    rt = k.csr("rt", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["H100"]})
    assert reason_of(matching.check(k.llama(), rt, svc)) == ACCEL


def test_q24_an_empty_accelerator_annotation_fails_a_runtime_without_classes(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": ""})
    assert reason_of(matching.check(k.llama(), k.csr("rt", k.llama_entry()), svc)) == ACCEL


def test_accelerator_classes_compare_exactly(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": "h100"})
    rt = k.csr("rt", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": ["H100"]})
    assert reason_of(matching.check(k.llama(), rt, svc)) == ACCEL


def test_the_accelerator_check_comes_before_the_format_check(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": "H100"})
    rt = k.csr("rt", k.llama_entry(modelArchitecture="X"))
    assert reason_of(matching.check(k.llama(), rt, svc)) == ACCEL


# --- 2.4 mismatch texts of one entry --------------------------------------------------------


def only_entry_mismatch(model, entry) -> str:
    runtime = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "rt"},
        "spec": {"supportedModelFormats": [entry]},
    }
    report = matching.check(model, runtime)
    assert report.compatible is False
    assert len(report.entries) == 1
    assert report.entries[0].passed is False
    return report.entries[0].mismatch


def test_verified_text_everything_missing_on_the_model_side(k):
    model = k.model(modelFormat=k.ref("safetensors"))
    e = k.entry(
        modelFormat=k.ref("safetensors", "1.0.0"),
        modelFramework=k.ref("transformers"),
        modelArchitecture="LlamaForCausalLM",
        quantization="fp8",
    )
    assert only_entry_mismatch(model, e) == (
        "model has no architecture but runtime requires LlamaForCausalLM, model has no quantization but runtime "
        "requires fp8, model has no format version but runtime requires 1.0.0, model has no framework but runtime "
        "requires transformers"
    )


def test_verified_text_versions_only_on_the_model_side(k):
    model = k.model(modelFormat=k.ref("safetensors", "1.0.0"), modelFramework=k.ref("transformers", "4.51.0"))
    e = k.entry(modelFormat=k.ref("safetensors"), modelFramework=k.ref("transformers"))
    assert only_entry_mismatch(model, e) == (
        "model has format version but runtime has no version requirement, model has framework version but "
        "runtime has no version requirement"
    )


def test_verified_text_pipeline_reason_comes_before_architecture(k):
    model = k.model(modelFormat=k.ref("diffusers"), modelArchitecture="FluxPipeline")
    e = k.entry(modelFormat=k.ref("diffusers"), modelArchitecture="QwenImagePipeline", diffusionPipeline={})
    assert only_entry_mismatch(model, e) == (
        "diffusion pipeline required by runtime but not specified in model, architecture mismatch "
        "(model=FluxPipeline, runtime=QwenImagePipeline)"
    )


MISMATCH_CASES = [
    pytest.param(
        {"modelFormat": {"name": "f"}, "modelArchitecture": "A"},
        {"modelFormat": {"name": "f"}, "modelArchitecture": "B"},
        "architecture mismatch (model=A, runtime=B)",
        id="architecture-differs",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "modelArchitecture": "A"},
        {"modelFormat": {"name": "f"}},
        "model has architecture A but runtime has no architecture requirement",
        id="architecture-only-on-model",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "modelArchitecture": ""},
        {"modelFormat": {"name": "f"}},
        "model has architecture  but runtime has no architecture requirement",
        id="architecture-empty-string-two-spaces",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}},
        {"modelFormat": {"name": "f"}, "modelArchitecture": "B"},
        "model has no architecture but runtime requires B",
        id="architecture-only-on-entry",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "quantization": "fp8"},
        {"modelFormat": {"name": "f"}, "quantization": "int4"},
        "quantization mismatch (model=fp8, runtime=int4)",
        id="quantization-differs",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "quantization": "fp8"},
        {"modelFormat": {"name": "f"}},
        "model has quantization fp8 but runtime has no quantization requirement",
        id="quantization-only-on-model",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}},
        {"modelFormat": {"name": "f"}, "quantization": "fp8"},
        "model has no quantization but runtime requires fp8",
        id="quantization-only-on-entry",
    ),
    pytest.param(
        {"modelFormat": {"name": "safetensors", "version": "1.0.0"}},
        {"modelFormat": {"name": "pytorch", "version": "2.0.0"}},
        "format name mismatch (model=safetensors, runtime=pytorch)",
        id="format-name-differs-versions-not-looked-at",
    ),
    pytest.param(
        {"modelFormat": {"name": "Safetensors"}},
        {"modelFormat": {"name": "safetensors"}},
        "format name mismatch (model=Safetensors, runtime=safetensors)",
        id="format-name-case-sensitive",
    ),
    pytest.param(
        {"modelFormat": {"name": "f", "version": "1.0.0"}},
        {"modelFormat": {"name": "f", "version": "1.0.1"}},
        "format version mismatch (model=1.0.0, runtime=1.0.1)",
        id="format-version-differs",
    ),
    pytest.param(
        {"modelFormat": {"name": "f", "version": "1.0.0"}},
        {"modelFormat": {"name": "f", "version": ""}},
        "format version mismatch (model=1.0.0, runtime=)",
        id="format-version-empty-on-entry",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}},
        {"modelFormat": {"name": "f", "version": "1.0.0"}},
        "model has no format version but runtime requires 1.0.0",
        id="format-version-only-on-entry",
    ),
    pytest.param(
        {"modelFormat": {"name": "f", "version": "1.0.0"}},
        {"modelFormat": {"name": "f"}},
        "model has format version but runtime has no version requirement",
        id="format-version-only-on-model",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "transformers"}},
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "vllm", "version": "1.0.0"}},
        "framework name mismatch (model=transformers, runtime=vllm)",
        id="framework-name-differs",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "t", "version": "4.51.0"}},
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "t", "version": "4.50.0"}},
        "framework version mismatch (model=4.51.0, runtime=4.50.0)",
        id="framework-version-differs",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "t"}},
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "t", "version": "4.51.0"}},
        "model has no framework version but runtime requires 4.51.0",
        id="framework-version-only-on-entry",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "t", "version": "4.51.0"}},
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "t"}},
        "model has framework version but runtime has no version requirement",
        id="framework-version-only-on-model",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}},
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "transformers"}},
        "model has no framework but runtime requires transformers",
        id="framework-only-on-entry",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "modelFramework": {"name": "transformers", "version": "4.51.0"}},
        {"modelFormat": {"name": "f"}},
        "model has framework transformers but runtime has no framework requirement",
        id="framework-only-on-model",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}},
        {"modelFramework": None},
        "unknown mismatch",
        id="q23-entry-without-modelFormat-null-framework",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}},
        {},
        "unknown mismatch",
        id="q23-empty-entry",
    ),
    pytest.param(
        {"modelFormat": {"name": "f"}, "modelArchitecture": "A"},
        {"modelArchitecture": "B"},
        "architecture mismatch (model=A, runtime=B)",
        id="q23-entry-without-modelFormat-omits-format-phrase",
    ),
]


@pytest.mark.parametrize(("model_spec", "entry", "expected"), MISMATCH_CASES)
def test_each_mismatch_phrase_has_the_spec_wording(k, model_spec, entry, expected):
    assert only_entry_mismatch(k.model(**model_spec), entry) == expected


def test_the_mismatch_reason_of_the_runtime_quotes_the_entry_text(k):
    model = k.model(
        modelFormat=k.ref("safetensors", "1.0.0"), modelFramework=k.ref("transformers"), modelArchitecture=""
    )
    report = matching.check(
        model, k.csr("rt", k.entry(modelFormat=k.ref("safetensors", "1.0.0"), modelFramework=k.ref("transformers")))
    )
    assert reason_of(report) == (
        "model format 'mt:safetensors:1.0.0::transformers' not in supported formats: model has architecture  "
        "but runtime has no architecture requirement"
    )


# --- 2.1 / Q9: absent is not a wildcard; null is absent ---------------------------------------


@pytest.mark.parametrize(
    ("model_spec", "entry_spec", "compatible"),
    [
        pytest.param({}, {}, True, id="nothing-on-either-side"),
        pytest.param({"modelArchitecture": "A"}, {"modelArchitecture": "A"}, True, id="architecture-equal"),
        pytest.param({"modelArchitecture": "A"}, {}, False, id="architecture-entry-absent-is-not-wildcard"),
        pytest.param({"modelArchitecture": ""}, {"modelArchitecture": ""}, True, id="architecture-empty-matches-empty"),
        pytest.param({"quantization": "fp8"}, {}, False, id="quantization-entry-absent-is-not-wildcard"),
        pytest.param({"quantization": "weird-q"}, {"quantization": "weird-q"}, True, id="quantization-free-string"),
        pytest.param({"modelArchitecture": None}, {}, True, id="model-null-architecture-is-absent"),
        pytest.param({}, {"quantization": None}, True, id="entry-null-quantization-is-absent"),
        pytest.param({"modelFramework": None}, {}, True, id="model-null-framework-is-absent"),
        pytest.param(
            {"modelFramework": {"name": "t"}}, {"modelFramework": {"name": "t"}}, True, id="framework-names-equal"
        ),
        pytest.param({"modelFramework": {"name": "t"}}, {}, False, id="framework-entry-absent-is-not-wildcard"),
    ],
)
def test_presence_rules_decide_compatibility(k, model_spec, entry_spec, compatible):
    model = k.model(modelFormat=k.ref("f"), **model_spec)
    rt = k.csr("rt", dict(modelFormat=k.ref("f"), autoSelect=True, **entry_spec))
    assert matching.check(model, rt).compatible is compatible


def test_a_model_without_modelFormat_has_the_bare_label(k):
    model = k.model()
    report = matching.check(model, k.csr("rt"))
    assert reason_of(report) == "model format 'mt:' not in supported formats: no supported formats defined"


# --- 2.8 / Q12 labels ---------------------------------------------------------------------------


LABEL_CASES = [
    pytest.param({"modelFormat": {"name": "safetensors"}}, "mt:safetensors", id="name-only"),
    pytest.param(
        {"modelFormat": {"name": "safetensors", "version": "1.0.0"}, "modelFramework": {"name": "transformers"}},
        "mt:safetensors:1.0.0:transformers",
        id="framework-without-version",
    ),
    pytest.param(
        {
            "modelFormat": {"name": "safetensors", "version": "1.0.0"},
            "modelArchitecture": "",
            "modelFramework": {"name": "transformers"},
        },
        "mt:safetensors:1.0.0::transformers",
        id="q12-empty-architecture-segment",
    ),
    pytest.param(
        {"modelFormat": {"name": "safetensors", "version": ""}},
        "mt:safetensors:",
        id="q12-empty-version-segment",
    ),
    pytest.param(
        {"modelFormat": {"name": "safetensors"}, "quantization": "fp8"},
        "mt:safetensors:fp8",
        id="quantization-without-version",
    ),
    pytest.param(
        {"modelFormat": {"name": "safetensors"}, "modelFramework": {"name": "transformers", "version": ""}},
        "mt:safetensors:transformers:",
        id="q12-empty-framework-version-segment",
    ),
    pytest.param(
        {
            "modelFormat": {"name": "safetensors", "version": "1.0.0"},
            "modelArchitecture": "LlamaForCausalLM",
            "modelParameterSize": "8B",
            "diffusionPipeline": {"className": "X"},
        },
        "mt:safetensors:1.0.0:LlamaForCausalLM",
        id="q12-size-and-pipeline-never-appear",
    ),
    pytest.param(
        {
            "modelFormat": {"name": "diffusers", "version": "0.34.0.dev0"},
            "modelArchitecture": "QwenImagePipeline",
            "modelFramework": {"name": "diffusers", "version": "0.34.0.dev0"},
        },
        "mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0",
        id="diffusers-full",
    ),
]


@pytest.mark.parametrize(("model_spec", "label"), LABEL_CASES)
def test_the_model_format_label_is_built_as_in_section_2_8(k, model_spec, label):
    report = matching.check(k.model(**model_spec), k.csr("rt"))
    assert reason_of(report) == f"model format '{label}' not in supported formats: no supported formats defined"


# --- 2.5 pipeline check -----------------------------------------------------------------------


PIPELINE_CASES = [
    pytest.param(
        {"className": "QwenImagePipeline"},
        {"className": "FluxPipeline"},
        "pipeline class mismatch (model=QwenImagePipeline, runtime=FluxPipeline)",
        id="class-differs",
    ),
    pytest.param(
        {"transformer": {"library": "diffusers"}},
        {"className": "FluxPipeline"},
        "pipeline class mismatch (model=<nil>, runtime=FluxPipeline)",
        id="class-absent-on-model-prints-nil",
    ),
    pytest.param(
        {},
        {"className": "FluxPipeline"},
        "pipeline class mismatch (model=<nil>, runtime=FluxPipeline)",
        id="class-required-against-empty-pipeline",
    ),
    pytest.param(
        {"className": "X"},
        {"tokenizer": {}},
        "component tokenizer required by runtime but not specified in model",
        id="empty-component-still-required",
    ),
    pytest.param(
        {"transformer": {"library": "diffusers", "type": "QwenImageTransformer2DModel"}},
        {"transformer": {"library": "diffusers", "type": "FluxTransformer2DModel"}},
        "transformer type mismatch (model=QwenImageTransformer2DModel, runtime=FluxTransformer2DModel)",
        id="transformer-type",
    ),
    pytest.param(
        {"textEncoder": {"library": "transformers", "type": "T5"}},
        {"textEncoder": {"library": "diffusers"}},
        "textEncoder library mismatch (model=transformers, runtime=diffusers)",
        id="text-encoder-library",
    ),
    pytest.param(
        {"vae": {"type": "AutoencoderKL"}},
        {"vae": {"library": "diffusers"}},
        "vae library mismatch (model=, runtime=diffusers)",
        id="vae-library-empty-on-model",
    ),
    pytest.param(
        {"className": "X"},
        {"additionalComponents": {"safety_checker": {}}},
        "diffusion pipeline missing required additional components",
        id="additional-components-absent-on-model",
    ),
    pytest.param(
        {"additionalComponents": {"feature_extractor": {"library": "transformers"}}},
        {"additionalComponents": {"safety_checker": {}}},
        "diffusion component safety_checker missing in model",
        id="additional-component-key-missing",
    ),
    pytest.param(
        {"additionalComponents": {"processor": {"library": "transformers", "type": "Qwen2VLProcessor"}}},
        {"additionalComponents": {"processor": {"type": "Other"}}},
        "processor type mismatch (model=Qwen2VLProcessor, runtime=Other)",
        id="additional-component-type",
    ),
    pytest.param(
        {"additionalComponents": {"processor": {"library": "transformers"}}},
        {"additionalComponents": {"processor": {"library": "diffusers"}}},
        "processor library mismatch (model=transformers, runtime=diffusers)",
        id="additional-component-library",
    ),
    pytest.param(
        {"className": "X"},
        {"scheduler": {}, "vae": {}},
        "component scheduler required by runtime but not specified in model",
        id="components-in-order-scheduler-first",
    ),
    pytest.param(
        {"scheduler": {}, "vae": {}},
        {"tokenizer": {}, "textEncoder": {}},
        "component textEncoder required by runtime but not specified in model",
        id="components-in-order-textEncoder-before-tokenizer",
    ),
    pytest.param(
        {"className": "Y"},
        {"className": "X", "scheduler": {}},
        "pipeline class mismatch (model=Y, runtime=X)",
        id="class-checked-before-components",
    ),
    pytest.param(
        {"vae": {"library": "a", "type": "b"}},
        {"vae": {"library": "c", "type": "d"}},
        "vae library mismatch (model=a, runtime=c)",
        id="library-checked-before-type",
    ),
    pytest.param(
        {"vae": {"library": "diffusers", "type": "AutoencoderKL"}},
        {"vae": {"library": "Diffusers"}},
        "vae library mismatch (model=diffusers, runtime=Diffusers)",
        id="library-case-sensitive",
    ),
    pytest.param(
        {"vae": {"library": "x"}, "additionalComponents": {"a": {}}},
        {"vae": {"library": "y"}, "additionalComponents": {"b": {}}},
        "vae library mismatch (model=x, runtime=y)",
        id="named-components-before-additional",
    ),
    pytest.param(
        {"scheduler": {"type": "S"}},
        {"scheduler": {"type": "T"}},
        "scheduler type mismatch (model=S, runtime=T)",
        id="scheduler-type",
    ),
    pytest.param(
        {"tokenizer": {"type": "S"}},
        {"tokenizer": {"library": "transformers"}},
        "tokenizer library mismatch (model=, runtime=transformers)",
        id="tokenizer-library-empty-on-model",
    ),
]


@pytest.mark.parametrize(("model_pipeline", "entry_pipeline", "expected"), PIPELINE_CASES)
def test_the_pipeline_check_names_its_first_problem(k, model_pipeline, entry_pipeline, expected):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline=model_pipeline)
    e = k.entry(modelFormat=k.ref("diffusers"), diffusionPipeline=entry_pipeline)
    assert only_entry_mismatch(model, e) == expected


def test_the_pipeline_reason_reaches_the_runtime_reason(k):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline={"className": "QwenImagePipeline"})
    rt = k.csr("rt", k.entry(modelFormat=k.ref("diffusers"), diffusionPipeline={"className": "FluxPipeline"}))
    assert reason_of(matching.check(model, rt)) == (
        "model format 'mt:diffusers' not in supported formats: pipeline class mismatch (model=QwenImagePipeline, runtime=FluxPipeline)"
    )


PIPELINE_PASS_CASES = [
    pytest.param(None, None, id="entry-without-pipeline-model-without"),
    pytest.param({"className": "X"}, None, id="entry-without-pipeline-model-with"),
    pytest.param({}, {}, id="empty-entry-pipeline-accepts-empty-model-pipeline"),
    pytest.param({"className": "X"}, {}, id="empty-entry-pipeline-accepts-any-pipeline"),
    pytest.param(
        {"scheduler": {"library": "diffusers", "type": "S"}}, {"scheduler": {}}, id="empty-component-matches-any"
    ),
    pytest.param(
        {"vae": {"library": "d", "type": "V"}},
        {"vae": {"library": "", "type": ""}},
        id="empty-library-and-type-are-wildcards",
    ),
    pytest.param({"vae": {"library": "d", "type": "V"}}, {"vae": {"type": "V"}}, id="absent-library-is-wildcard"),
    pytest.param({"className": "X"}, {"additionalComponents": {}}, id="empty-additional-components-is-no-requirement"),
    pytest.param(
        {"className": "X", "scheduler": {}, "additionalComponents": {"safety_checker": {"library": "d"}}},
        {"className": "X"},
        id="model-may-have-extra-components",
    ),
    pytest.param(
        {"additionalComponents": {"safety_checker": {"library": "diffusers", "type": "C"}}},
        {"additionalComponents": {"safety_checker": {"library": "diffusers"}}},
        id="additional-component-library-match",
    ),
    pytest.param({}, {"className": None}, id="null-class-name-is-absent"),
]


@pytest.mark.parametrize(("model_pipeline", "entry_pipeline"), PIPELINE_PASS_CASES)
def test_the_pipeline_check_passes_where_the_spec_says(k, model_pipeline, entry_pipeline):
    mspec = {"modelFormat": k.ref("diffusers")}
    if model_pipeline is not None:
        mspec["diffusionPipeline"] = model_pipeline
    espec = {"modelFormat": k.ref("diffusers"), "autoSelect": True}
    if entry_pipeline is not None:
        espec["diffusionPipeline"] = entry_pipeline
    assert matching.check(k.model(**mspec), k.csr("rt", espec)).compatible is True


def test_q10_an_empty_entry_pipeline_rejects_an_llm(k):
    rt = k.csr("rt", k.llama_entry(diffusionPipeline={}))
    assert reason_of(matching.check(k.llama(), rt)) == (
        f"model format '{k.LLAMA_LABEL}' not in supported formats: diffusion pipeline required by runtime but not specified in model"
    )


def test_q6_one_of_several_failing_additional_components_is_named(k):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline={"additionalComponents": {"z": {}}})
    e = k.entry(modelFormat=k.ref("diffusers"), diffusionPipeline={"additionalComponents": {"a": {}, "b": {}}})
    assert only_entry_mismatch(model, e) in {
        "diffusion component a missing in model",
        "diffusion component b missing in model",
    }


def test_q8_the_entry_text_has_one_pipeline_failure_but_every_other_category(k):
    model = k.model(
        modelFormat=k.ref("diffusers", "1.0.0"), modelArchitecture="A", diffusionPipeline={"className": "P"}
    )
    e = k.entry(
        modelFormat=k.ref("diffusers", "2.0.0"),
        modelArchitecture="B",
        quantization="fp8",
        diffusionPipeline={"className": "Q", "scheduler": {}},
    )
    assert only_entry_mismatch(model, e) == (
        "pipeline class mismatch (model=P, runtime=Q), architecture mismatch (model=A, runtime=B), model has no "
        "quantization but runtime requires fp8, format version mismatch (model=1.0.0, runtime=2.0.0)"
    )


# --- 2.7 size --------------------------------------------------------------------------------


def sized(k, size, lo="7B", hi="9B"):
    model = k.llama(modelParameterSize=size)
    return matching.check(model, k.csr("rt", k.llama_entry(), modelSizeRange={"min": lo, "max": hi}))


def test_a_size_outside_the_range_gives_the_verified_text(k):
    report = sized(k, "8B", "10B", "70B")
    assert reason_of(report) == "model size 8B is outside supported range [10B, 70B]"


@pytest.mark.parametrize("size", ["7B", "9B", "8B", "7000M", "0.009T"], ids=lambda s: s)
def test_range_bounds_are_inclusive(k, size):
    assert sized(k, size).compatible is True


@pytest.mark.parametrize(
    ("size", "lo", "hi", "compatible"),
    [
        pytest.param("1e3M", "1B", "1B", True, id="exponent-with-suffix"),
        pytest.param("0x1p3B", "8B", "8B", True, id="hex-float"),
        pytest.param(".5B", "500M", "500M", True, id="leading-dot"),
        pytest.param("+7B", "7B", "7B", True, id="plus-sign"),
        pytest.param("1.B", "1B", "1B", True, id="trailing-dot"),
        pytest.param("1_000", "1000", "1000", True, id="go-underscore"),
        pytest.param("1e9", "1B", "1B", True, id="bare-exponent"),
        pytest.param("1.5T", "1500B", "1500B", True, id="tera"),
        pytest.param("-1B", "0", "9B", False, id="negative-below-zero"),
        pytest.param("Inf", "1B", "70B", False, id="inf-above-max"),
        pytest.param("NaN", "1B", "70B", True, id="q17-nan-passes-any-range"),
        pytest.param("7b", "1B", "70B", False, id="q17-lowercase-suffix-is-zero"),
        pytest.param("7K", "1B", "70B", False, id="q17-K-is-zero"),
        pytest.param(" 7B", "1B", "70B", False, id="q17-leading-space-is-zero"),
        pytest.param("7B ", "1B", "70B", False, id="q17-trailing-space-is-zero"),
        pytest.param("", "1B", "70B", False, id="q17-empty-is-zero"),
        pytest.param("0", "1B", "70B", False, id="q26-agent-zero"),
        pytest.param("7BB", "1B", "70B", False, id="double-suffix-is-zero"),
        pytest.param("1__0B", "1B", "70B", False, id="double-underscore-is-zero"),
        pytest.param("\u0661B", "1B", "70B", False, id="non-ascii-digit-is-zero"),
        pytest.param("7b", "0", "70B", True, id="zero-size-fits-a-zero-min"),
        pytest.param("1B", "2b", "9B", True, id="unparsable-min-is-no-lower-limit"),
        pytest.param("1B", "500M", "4b", False, id="unparsable-max-rejects-every-sized-model"),
    ],
)
def test_sizes_are_parsed_like_go_before_the_range_check(k, size, lo, hi, compatible):
    report = sized(k, size, lo, hi)
    assert report.compatible is compatible
    if not compatible:
        assert report.reasons == (f"model size {size} is outside supported range [{lo}, {hi}]",)


def test_the_size_reason_prints_the_raw_strings(k):
    report = sized(k, "7b", "1B", "70B")
    assert report.reasons == ("model size 7b is outside supported range [1B, 70B]",)


def test_the_format_reason_wins_over_the_size_reason(k):
    model = k.llama(modelParameterSize="8B")
    rt = k.csr("rt", k.llama_entry(modelArchitecture="X"), modelSizeRange={"min": "10B", "max": "70B"})
    assert reason_of(matching.check(model, rt)).startswith("model format '")


def test_q25_the_size_range_applies_to_the_whole_runtime(k):
    model = k.llama(modelParameterSize="8B")
    rt = k.csr("rt", k.llama_entry(modelArchitecture="X"), k.llama_entry(), modelSizeRange={"min": "10B", "max": "70B"})
    assert reason_of(matching.check(model, rt)) == "model size 8B is outside supported range [10B, 70B]"


def test_a_sized_model_passes_a_runtime_without_a_range_without_warnings(k):
    report = matching.check(k.llama(modelParameterSize="8B"), k.csr("rt", k.llama_entry()))
    assert report.compatible is True
    assert report.warnings == ()


def test_q26_a_diffusion_model_without_diffusers_version_matches_nothing_versioned(k):
    model = k.qwen(modelFormat=k.ref("diffusers", ""), modelFramework=k.ref("diffusers", ""))
    report = matching.check(model, k.qwen_plain_runtime())
    assert reason_of(report) == (
        "model format 'mt:diffusers::QwenImagePipeline:diffusers:' not in supported formats: format version "
        "mismatch (model=, runtime=0.34.0.dev0), framework version mismatch (model=, runtime=0.34.0.dev0)"
    )


# --- report shape ----------------------------------------------------------------------------


def test_every_report_converts_to_a_dict(k):
    report = matching.check(k.llama(), k.csr("rt", k.llama_entry()))
    out = report.to_dict()
    assert isinstance(out, dict)
    assert out["compatible"] is True


def test_each_entry_report_lists_checks_with_values(k):
    report = matching.check(k.llama(), k.csr("rt", k.llama_entry(modelArchitecture="MistralForCausalLM")))
    checks = report.entries[0].checks
    assert any(
        c.passed is False and c.model == "LlamaForCausalLM" and c.runtime == "MistralForCausalLM" for c in checks
    )
    assert all(hasattr(c, "check") and hasattr(c, "reason") for c in checks)


def test_entry_reports_are_indexed_from_zero_in_entry_order(k):
    report = matching.check(
        k.llama(), k.csr("rt", k.llama_entry(modelArchitecture="X"), k.llama_entry(), k.llama_entry(quantization="fp8"))
    )
    assert [e.index for e in report.entries] == [0, 1, 2]
    assert [e.passed for e in report.entries] == [False, True, False]
