"""Conformance: finer edges of sections 2.7 (Go float parsing of sizes), 2.8, 3.1, 4.1, 4.3,
5.4 (Q27), 6.3 and U2 that a Python port is likely to get wrong.
"""

from __future__ import annotations

import pytest

import matching

NS = "team"
NO_SIZE = "model does not specify size, but runtime has size constraints"


def sized(k, size, lo, hi):
    rt = k.csr("rt", k.llama_entry(), modelSizeRange={"min": lo, "max": hi})
    return matching.check(k.llama(modelParameterSize=size), rt)


# --- 2.7 sizes are parsed with Go's strconv.ParseFloat; any error makes the size 0 ----------------


@pytest.mark.parametrize(
    ("size", "lo", "hi", "compatible"),
    [
        # ParseFloat reports ErrRange on overflow, so the size is 0, not +Inf.
        pytest.param("1e400", "0", "70B", True, id="overflow-is-an-error-so-zero-fits-0-70B"),
        pytest.param("1e400", "1B", "70B", False, id="overflow-is-zero-below-a-positive-min"),
        pytest.param("1" + "0" * 400, "0", "70B", True, id="long-digit-overflow-is-zero"),
        pytest.param("1.8e308", "0", "70B", True, id="just-above-max-float-is-an-error-so-zero"),
        pytest.param("0x1p2000", "0", "70B", True, id="hex-overflow-is-an-error-so-zero"),
        pytest.param("1e308B", "1B", "Inf", True, id="suffix-multiplication-may-reach-inf-without-error"),
        pytest.param("1e308B", "0", "70B", False, id="suffix-multiplication-inf-is-above-max"),
        pytest.param("1e-400B", "0", "0", True, id="underflow-is-zero"),
        # Go accepts a sign only before inf/infinity, never before nan.
        pytest.param("-NaN", "1B", "70B", False, id="signed-nan-is-an-error-so-zero"),
        pytest.param("+nanB", "1B", "70B", False, id="signed-nan-with-suffix-is-zero"),
        pytest.param("nanB", "1B", "70B", True, id="nan-with-suffix-passes-any-range"),
        pytest.param("NAN", "1B", "70B", True, id="nan-any-case"),
        pytest.param("infinityB", "1B", "Inf", True, id="infinity-with-suffix-is-inf"),
        pytest.param("INF", "1B", "+Infinity", True, id="inf-any-case"),
        pytest.param("infinit", "0", "70B", True, id="partial-infinity-is-an-error-so-zero"),
        pytest.param("infinit", "1B", "70B", False, id="partial-infinity-is-zero-below-min"),
        pytest.param("0x10B", "1B", "70B", False, id="hex-without-p-exponent-is-zero"),
        pytest.param("0X1P3B", "8B", "8B", True, id="hex-uppercase-x-and-p"),
        pytest.param("0x1.8p1", "3", "3", True, id="hex-fraction"),
        pytest.param("1E3M", "1B", "1B", True, id="uppercase-exponent"),
        pytest.param("1e+3M", "1B", "1B", True, id="signed-exponent"),
        pytest.param(".", "0", "70B", True, id="lone-dot-is-zero"),
        pytest.param("_1B", "1B", "70B", False, id="leading-underscore-is-zero"),
        pytest.param("1_B", "1B", "70B", False, id="trailing-underscore-is-zero"),
        pytest.param("1e", "0", "1", True, id="bare-e-is-zero"),
        pytest.param("7B", "1B", "1e400", False, id="overflowing-max-is-zero"),
        pytest.param("7B", "-NaN", "9B", True, id="signed-nan-min-is-zero"),
        pytest.param("7B", "NaN", "NaN", True, id="nan-bounds-admit-everything"),
    ],
)
def test_sizes_follow_go_parse_float_exactly(k, size, lo, hi, compatible):
    report = sized(k, size, lo, hi)
    assert report.compatible is compatible, report.reasons
    if not compatible:
        assert report.reasons == (f"model size {size} is outside supported range [{lo}, {hi}]",)


def test_a_present_empty_size_suppresses_the_no_size_warning(k):
    report = sized(k, "", "0", "9B")
    assert report.compatible is True
    assert NO_SIZE not in report.warnings


def test_a_null_size_is_absent_and_warned(k):
    report = sized(k, None, "7B", "9B")
    assert report.compatible is True
    assert report.warnings == (NO_SIZE,)


def test_a_null_size_range_is_absent(k):
    rt = k.csr("rt", k.llama_entry(), modelSizeRange=None)
    report = matching.check(k.llama(modelParameterSize="8B"), rt)
    assert report.compatible is True
    assert report.warnings == ()


# --- 4.3 size tie-break details ------------------------------------------------------------------------


def test_an_unparsable_model_size_orders_ranges_around_zero(k):
    model = k.llama(modelParameterSize="7b")  # size 0
    narrow = k.csr("z-narrow", k.llama_entry(), modelSizeRange={"min": "0", "max": "9B"})
    wide = k.csr("a-wide", k.llama_entry(), modelSizeRange={"min": "0", "max": "70B"})
    assert [m.name for m in matching.select(model, [wide, narrow], namespace=NS).compatible] == ["z-narrow", "a-wide"]


def test_a_size_score_difference_of_one_and_a_half_truncates_to_one_and_still_orders(k):
    model = k.llama(modelParameterSize="8")
    narrow = k.csr("z-narrow", k.llama_entry(), modelSizeRange={"min": "7", "max": "9"})  # 2
    wide = k.csr("a-wide", k.llama_entry(), modelSizeRange={"min": "7", "max": "10.5"})  # 3.5
    assert [m.name for m in matching.select(model, [wide, narrow], namespace=NS).compatible] == ["z-narrow", "a-wide"]


# --- 2.8 labels ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        pytest.param({"modelFormat": {"name": "f"}, "quantization": ""}, "mt:f:", id="empty-quantization-segment"),
        pytest.param(
            {
                "modelFormat": {"name": "f", "version": "1"},
                "modelArchitecture": "A",
                "quantization": "q",
                "modelFramework": {"name": "fw", "version": "2"},
            },
            "mt:f:1:A:q:fw:2",
            id="all-segments-in-order",
        ),
        pytest.param(
            {"modelFormat": {"name": "f"}, "modelFramework": {"name": "fw", "version": None}},
            "mt:f:fw",
            id="null-framework-version-absent",
        ),
    ],
)
def test_more_labels(k, spec, label):
    report = matching.check(k.model(**spec), k.csr("rt"))
    assert report.reasons == (f"model format '{label}' not in supported formats: no supported formats defined",)


# --- 3.1 version parsing through the matcher -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "valid"),
    [
        pytest.param("18446744073709551615.0.0", True, id="max-uint64"),
        pytest.param("18446744073709551616.0.0", False, id="uint64-overflow"),
        pytest.param("1.", False, id="trailing-dot"),
        pytest.param("v", False, id="bare-v"),
        pytest.param("+1", False, id="plus-sign"),
        pytest.param(" 1", False, id="leading-space"),
        pytest.param("1 ", False, id="trailing-space"),
        pytest.param("01", False, id="leading-zero"),
        pytest.param("1.02", False, id="leading-zero-minor"),
        pytest.param("1-rc", False, id="pre-release-on-one-part"),
        pytest.param("1.2.3-", False, id="empty-pre-release"),
        pytest.param("1.2.3+", False, id="empty-build"),
        pytest.param("1.2.3.", False, id="empty-dev"),
        pytest.param("1.2.3.4.5", True, id="dev-with-two-elements"),
        pytest.param("1_0.0.0", False, id="underscore"),
        pytest.param("\u0661.0.0", False, id="non-ascii-digit"),
        pytest.param("1.2.3-rc..1", False, id="empty-pre-release-element"),
        pytest.param("1.2.3.4-rc.x+b.c", True, id="dev-pre-and-build"),
        pytest.param("1.2.03", False, id="leading-zero-patch"),
        pytest.param("0.0.0", True, id="zeros"),
    ],
)
def test_a_version_that_does_not_parse_never_matches_even_itself(k, version, valid):
    model = k.model(modelFormat=k.ref("f", version))
    rt = k.csr("rt", k.entry(modelFormat=k.ref("f", version), autoSelect=True))
    assert matching.check(model, rt).compatible is valid


def test_build_metadata_counts_for_equality(k):
    model = k.model(modelFormat=k.ref("f", "1.0.0+a"))
    rt = k.csr("rt", k.entry(modelFormat=k.ref("f", "1.0.0+b"), autoSelect=True))
    assert matching.check(model, rt).compatible is False


def test_dev_elements_compare_as_strings_so_04_is_not_4(k):
    # "1.2.3.4" has dev ["4"] and "1.2.3.04" has dev ["04"]: the lists differ.
    model = k.model(modelFormat=k.ref("f", "1.2.3.04"))
    rt = k.csr("rt", k.entry(modelFormat=k.ref("f", "1.2.3.4"), autoSelect=True))
    assert matching.check(model, rt).compatible is False


# --- 4.1 more scores -------------------------------------------------------------------------------------------


def test_a_model_version_without_an_entry_version_still_scores(k):
    e = k.entry(modelFormat=k.ref("safetensors"), modelFramework=k.ref("transformers"), autoSelect=True)
    assert matching.score(k.llama(), k.csr("rt", e)) == 15


def test_an_entry_without_format_or_framework_scores_0_against_a_model_without_framework(k):
    model = k.model(modelFormat=k.ref("safetensors"))
    assert matching.score(model, k.csr("rt", k.entry(autoSelect=True))) == 0


# --- Q27 variations ------------------------------------------------------------------------------------------------


def test_q27_a_compatible_cluster_runtime_does_not_erase_the_namespace_runtimes_reason(k):
    ns_bad = k.sr("dup", k.llama_entry(modelArchitecture="GemmaForCausalLM"))
    cl_manual = k.csr("dup", k.llama_entry(autoSelect=False))
    sel = matching.select(k.llama(), [ns_bad, cl_manual], namespace=NS)
    assert sel.selected is None
    assert sel.excluded == {
        "dup": (
            f"model format '{k.LLAMA_LABEL}' not in supported formats: architecture mismatch "
            "(model=LlamaForCausalLM, runtime=GemmaForCausalLM)"
        )
    }
    assert sel.error.startswith(
        "no runtime found to support model safetensors with format safetensors in namespace team. "
        "Checked 2 runtimes (1 namespace-scoped, 1 cluster-scoped). Excluded runtimes: dup (model format"
    )


def test_namespace_param_wins_over_the_models_namespace(k):
    rt = k.sr("rt", k.llama_entry(), namespace="x")
    assert matching.select(k.llama(namespace="models"), [rt], namespace="x").selected == "rt"


# --- 6.3 more -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(
            {"_class_name": "P", "vae": [None]}, {"className": "P", "vae": {}}, id="single-null-element-recorded-empty"
        ),
        pytest.param(
            {"_class_name": "P", "vae": {"_library": "", "library": "L", "type": "T"}},
            {"className": "P", "vae": {"library": "L", "type": "T"}},
            id="empty-_library-falls-back",
        ),
        pytest.param(
            {"_class_name": "P", "Scheduler": ["d", "S"]},
            {"className": "P", "scheduler": {"library": "d", "type": "S"}},
            id="uppercase-scheduler",
        ),
        pytest.param(
            {"_class_name": "P", "VAE": ["d", "V"]},
            {"className": "P", "vae": {"library": "d", "type": "V"}},
            id="uppercase-vae",
        ),
        pytest.param(
            {"_class_name": "P", "TOKENIZER": ["t", "T"]},
            {"className": "P", "tokenizer": {"library": "t", "type": "T"}},
            id="uppercase-tokenizer",
        ),
        pytest.param(
            {"_class_name": "P", "tokenizer_2": ["t", "T"]},
            {"className": "P", "additionalComponents": {"tokenizer_2": {"library": "t", "type": "T"}}},
            id="tokenizer_2-is-additional",
        ),
    ],
)
def test_more_model_index_cases(data, expected):
    assert matching.pipeline_from_model_index(data) == expected


@pytest.mark.parametrize("data", [[], ["x"], "text", 3, None], ids=["empty-list", "list", "string", "number", "null"])
def test_a_model_index_that_is_not_an_object_records_nothing(data):
    with pytest.raises(matching.ModelIndexError):
        matching.pipeline_from_model_index(data)


# --- U2 more -------------------------------------------------------------------------------------------------------


def test_u2_leader_annotations_on_the_runtime_do_not_declare_a_mode(k):
    rt = k.csr(
        "rt",
        k.llama_entry(),
        engineConfig={"leader": {"annotations": {"ome.io/deploymentMode": "MultiNode"}}, "worker": {"size": 1}},
    )
    svc = k.isvc(engine={"annotations": {"ome.io/deploymentMode": "OMENative"}})
    assert matching.check(k.llama(), rt, svc).compatible is True


def test_u2_the_typed_field_constrains_the_decoder_when_there_is_a_decoder(k):
    rt = k.csr("rt", k.llama_entry(), decoderConfig={"annotations": {"ome.io/deploymentMode": "MultiNode"}})
    svc = k.isvc(deploymentMode="RawDeployment", decoder={"minReplicas": 1})
    assert matching.check(k.llama(), rt, svc).reasons == (
        "runtime decoder deployment mode MultiNode does not match requested decoder deployment mode RawDeployment",
    )


def test_u2_the_engine_is_checked_before_the_decoder(k):
    rt = k.csr(
        "rt",
        k.llama_entry(),
        engineConfig={"annotations": {"ome.io/deploymentMode": "MultiNode"}},
        decoderConfig={"annotations": {"ome.io/deploymentMode": "MultiNode"}},
    )
    svc = k.isvc(
        engine={"annotations": {"ome.io/deploymentMode": "OMENative"}},
        decoder={"annotations": {"ome.io/deploymentMode": "RawDeployment"}},
    )
    assert matching.check(k.llama(), rt, svc).reasons == (
        "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative",
    )


def test_u2_a_runtime_without_a_mode_passes_any_requested_mode(k):
    svc = k.isvc(engine={"annotations": {"ome.io/deploymentMode": "MultiNode"}}, deploymentMode="OMENative")
    assert matching.check(k.llama(), k.csr("rt", k.llama_entry()), svc).compatible is True


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(["diffusers", "V", 1], id="third-element-a-number"),
        pytest.param(["diffusers", "V", None, True], id="fourth-element-a-bool"),
        pytest.param(["diffusers", ["V"]], id="nested-array"),
        pytest.param([{"library": "d"}], id="array-of-objects"),
    ],
)
def test_an_array_that_is_not_all_strings_or_nulls_is_skipped(value):
    assert matching.pipeline_from_model_index({"_class_name": "P", "vae": value}) == {"className": "P"}


def test_an_empty_model_additional_components_map_fails_a_required_key(k):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline={"additionalComponents": {}})
    rt = k.csr("rt", k.entry(modelFormat=k.ref("diffusers"), diffusionPipeline={"additionalComponents": {"s": {}}}))
    assert matching.check(model, rt).entries[0].mismatch == "diffusion pipeline missing required additional components"


def test_a_model_without_format_shows_an_empty_format_name(k):
    model = k.model(modelArchitecture="A")
    rt = k.csr("rt", k.entry(modelFormat=k.ref("safetensors"), modelArchitecture="A"))
    assert matching.check(model, rt).reasons == (
        "model format 'mt::A' not in supported formats: format name mismatch (model=, runtime=safetensors)",
    )


def test_u2_virtual_deployment_is_a_mode(k):
    rt = k.csr("rt", k.llama_entry(), engineConfig={"annotations": {"ome.io/deploymentMode": "VirtualDeployment"}})
    svc = k.isvc(engine={"annotations": {"ome.io/deploymentMode": "OMENative"}})
    assert matching.check(k.llama(), rt, svc).reasons == (
        "runtime engine deployment mode VirtualDeployment does not match requested engine deployment mode OMENative",
    )


def test_a_present_empty_model_size_still_applies_the_size_tie_break(k):
    model = k.llama(modelParameterSize="")
    narrow = k.csr("z-narrow", k.llama_entry(), modelSizeRange={"min": "0", "max": "9B"})
    wide = k.csr("a-wide", k.llama_entry(), modelSizeRange={"min": "0", "max": "70B"})
    assert [m.name for m in matching.select(model, [wide, narrow], namespace=NS).compatible] == ["z-narrow", "a-wide"]


# --- present-but-empty strings are values, never "absent" (sections 1.5-1.6) --------------------------


@pytest.mark.parametrize(
    ("size", "size_range", "reason"),
    [
        pytest.param("8B", {"min": "", "max": "9B"}, None, id="empty-min-is-zero"),
        pytest.param(
            "8B",
            {"min": "1B", "max": ""},
            "model size 8B is outside supported range [1B, ]",
            id="empty-max-is-zero-not-absent",
        ),
        pytest.param("8B", {"min": "", "max": ""}, "model size 8B is outside supported range [, ]", id="both-empty"),
        pytest.param("8B", {"max": ""}, "model size 8B is outside supported range (-inf, ]", id="u1-only-empty-max"),
    ],
)
def test_empty_size_bounds_are_present_and_parse_as_zero(k, size, size_range, reason):
    rt = k.csr("rt", k.llama_entry(), modelSizeRange=size_range)
    report = matching.check(k.llama(modelParameterSize=size), rt)
    assert report.reasons == (() if reason is None else (reason,))


@pytest.mark.parametrize(
    ("model_spec", "entry", "expected"),
    [
        pytest.param(
            {"quantization": ""},
            {},
            "model has quantization  but runtime has no quantization requirement",
            id="model-empty-quantization",
        ),
        pytest.param(
            {}, {"quantization": ""}, "model has no quantization but runtime requires ", id="entry-empty-quantization"
        ),
        pytest.param(
            {},
            {"modelArchitecture": ""},
            "model has no architecture but runtime requires ",
            id="entry-empty-architecture",
        ),
        pytest.param(
            {"modelArchitecture": "A"},
            {"modelArchitecture": ""},
            "architecture mismatch (model=A, runtime=)",
            id="entry-empty-architecture-vs-value",
        ),
        pytest.param(
            {"fv": ""},
            {},
            "model has format version but runtime has no version requirement",
            id="model-empty-format-version",
        ),
        pytest.param(
            {}, {"fv": ""}, "model has no format version but runtime requires ", id="entry-empty-format-version"
        ),
        pytest.param(
            {"fv": ""}, {"fv": ""}, "format version mismatch (model=, runtime=)", id="both-empty-format-versions"
        ),
        pytest.param(
            {},
            {"modelFramework": {"name": ""}},
            "model has no framework but runtime requires ",
            id="entry-empty-framework-name",
        ),
        pytest.param(
            {"modelFramework": {"name": "t", "version": ""}},
            {"modelFramework": {"name": "t"}},
            "model has framework version but runtime has no version requirement",
            id="model-empty-framework-version",
        ),
    ],
)
def test_empty_strings_are_present_values_in_mismatch_texts(k, model_spec, entry, expected):
    model_spec = dict(model_spec)
    entry = dict(entry)
    mf = {"name": "f"}
    if "fv" in model_spec:
        mf["version"] = model_spec.pop("fv")
    ef = {"name": "f"}
    if "fv" in entry:
        ef["version"] = entry.pop("fv")
    report = matching.check(k.model(modelFormat=mf, **model_spec), k.csr("rt", dict(modelFormat=ef, **entry)))
    assert report.entries[0].mismatch == expected


def test_a_model_empty_class_name_prints_empty_not_nil(k):
    model = k.model(modelFormat=k.ref("diffusers"), diffusionPipeline={"className": ""})
    rt = k.csr("rt", k.entry(modelFormat=k.ref("diffusers"), diffusionPipeline={"className": "X"}))
    assert matching.check(model, rt).entries[0].mismatch == "pipeline class mismatch (model=, runtime=X)"


def test_a_runtime_listing_the_empty_class_passes_the_empty_annotation(k):
    svc = k.isvc(annotations={"ome.io/accelerator-class": ""})
    rt = k.csr("rt", k.llama_entry(), acceleratorRequirements={"acceleratorClasses": [""]})
    assert matching.check(k.llama(), rt, svc).compatible is True


# --- 3.1 / 3.3 parsing subtleties --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rt_version", "operator", "model_version", "match"),
    [
        pytest.param("1.0", "", "1.0.0", False, id="empty-operator-is-unknown-not-equal-so-precision-applies"),
        pytest.param("1.0.0", "", "1.0.0", True, id="empty-operator-same-precision"),
        pytest.param("1.0", None, "1.0.0", True, id="absent-operator-is-equal"),
        pytest.param("1.2.3.4-a", None, "1.2.3-a.4", False, id="dev-then-pre-differs-from-pre-with-dots"),
        pytest.param("1.2.3-a.4", None, "1.2.3-a.4", True, id="pre-with-dots"),
        pytest.param("1.2.3+b-1", None, "1.2.3+b-1", True, id="dash-inside-build"),
        pytest.param("1.2.3-x+y", None, "1.2.3-x", False, id="build-counts"),
        pytest.param("vv1", None, "vv1", False, id="double-v-prefix"),
        pytest.param("v0", None, "0.0.0", True, id="v0"),
        pytest.param("00", None, "00", False, id="double-zero"),
        pytest.param("1.2", None, "1.2.0", True, id="two-parts-equal"),
        pytest.param("v1.2", "GreaterThanOrEqual", "v1.1", True, id="prefixed-two-parts-ordered"),
        pytest.param(
            "1.2.3-rc.1", "GreaterThanOrEqual", "1.2.3-rc.1", True, id="unofficial-equal-under-ordering-operator"
        ),
        pytest.param("1.2.4", "GreaterThanOrEqual", "1.2.3-rc.1", False, id="unofficial-model-forces-equal"),
    ],
)
def test_more_version_matches(k, rt_version, operator, model_version, match):
    model = k.model(modelFormat=k.ref("f", model_version))
    rt = k.csr("rt", k.entry(modelFormat=k.ref("f", rt_version, operator), autoSelect=True))
    assert matching.check(model, rt).compatible is match


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param([""], {"className": "P", "vae": {}}, id="single-empty-string"),
        pytest.param(["", ""], {"className": "P", "vae": {}}, id="two-empty-strings"),
        pytest.param(["", "V"], {"className": "P", "vae": {"type": "V"}}, id="empty-library"),
    ],
)
def test_array_components_with_empty_strings_are_still_recorded(value, expected):
    assert matching.pipeline_from_model_index({"_class_name": "P", "vae": value}) == expected


# --- CRD defaults fill only what is absent ---------------------------------------------------------------


def test_crd_defaults_keep_an_explicit_weight_0_which_scores_as_10(k):
    e = k.llama_entry(modelFormat=k.ref("safetensors", "1.0.0", weight=0))
    rt = matching.with_crd_defaults(k.csr("rt", e))
    assert rt["spec"]["supportedModelFormats"][0]["modelFormat"]["weight"] == 0
    assert matching.score(k.llama(), rt) == 11


def test_crd_defaults_fill_a_null_weight(k):
    e = k.llama_entry(modelFormat={"name": "safetensors", "version": "1.0.0", "weight": None})
    rt = matching.with_crd_defaults(k.csr("rt", e))
    assert matching.score(k.llama(), rt) == 2


def test_crd_defaults_do_not_change_priority_or_auto_select(k):
    e = k.llama_entry(autoSelect=k.DROP)
    rt = matching.with_crd_defaults(k.csr("rt", e))
    out = rt["spec"]["supportedModelFormats"][0]
    assert "priority" not in out
    assert "autoSelect" not in out
