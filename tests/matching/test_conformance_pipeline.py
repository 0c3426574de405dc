"""Conformance: model_index.json parsing (6.3), the seed page end to end (section 9),
`pipeline_patch` and `merge_patch` (RFC 7386).
"""

from __future__ import annotations

import copy

import pytest

import matching

SEED_INDEX = {
    "_class_name": "StableDiffusionPipeline",
    "_diffusers_version": "0.24.0",
    "scheduler": ["diffusers", "EulerDiscreteScheduler"],
    "text_encoder": ["transformers", "CLIPTextModel"],
    "tokenizer": ["transformers", "CLIPTokenizer"],
    "unet": ["diffusers", "UNet2DConditionModel"],
    "vae": ["diffusers", "AutoencoderKL"],
    "safety_checker": ["diffusers", "StableDiffusionSafetyChecker"],
}

SEED_PIPELINE = {
    "className": "StableDiffusionPipeline",
    "scheduler": {"library": "diffusers", "type": "EulerDiscreteScheduler"},
    "textEncoder": {"library": "transformers", "type": "CLIPTextModel"},
    "tokenizer": {"library": "transformers", "type": "CLIPTokenizer"},
    "transformer": {"library": "diffusers", "type": "UNet2DConditionModel"},
    "vae": {"library": "diffusers", "type": "AutoencoderKL"},
    "additionalComponents": {"safety_checker": {"library": "diffusers", "type": "StableDiffusionSafetyChecker"}},
}


# --- 6.3 ---------------------------------------------------------------------------------------------


def test_the_seed_model_index_gives_the_seed_pipeline():
    assert matching.pipeline_from_model_index(SEED_INDEX) == SEED_PIPELINE


def test_the_second_verified_model_index_example():
    data = {
        "_class_name": "X",
        "safety_checker": [None, None],
        "feature_extractor": [None, None],
        "requires_safety_checker": True,
        "image_encoder": None,
        "text_encoder_2": ["transformers", "T5EncoderModel"],
        "tokenizer_2": ["transformers", "T5TokenizerFast"],
    }
    assert matching.pipeline_from_model_index(data) == {
        "className": "X",
        "additionalComponents": {
            "feature_extractor": {},
            "safety_checker": {},
            "text_encoder_2": {"library": "transformers", "type": "T5EncoderModel"},
            "tokenizer_2": {"library": "transformers", "type": "T5TokenizerFast"},
        },
    }


INDEX_CASES = [
    pytest.param(
        {"_class_name": "P", "vae": ["AutoencoderKL"]},
        {"className": "P", "vae": {"type": "AutoencoderKL"}},
        id="one-element-array-is-type-only",
    ),
    pytest.param({"_class_name": "P", "vae": []}, {"className": "P"}, id="empty-array-skipped"),
    pytest.param(
        {"_class_name": "P", "vae": ["d", "V", "extra"]},
        {"className": "P", "vae": {"library": "d", "type": "V"}},
        id="extra-elements-ignored",
    ),
    pytest.param(
        {"_class_name": "P", "vae": [None, "V"]}, {"className": "P", "vae": {"type": "V"}}, id="null-library-omitted"
    ),
    pytest.param(
        {"_class_name": "P", "vae": ["d", None]}, {"className": "P", "vae": {"library": "d"}}, id="null-type-omitted"
    ),
    pytest.param({"_class_name": "P", "vae": ["d", 1]}, {"className": "P"}, id="non-string-element-skipped"),
    pytest.param({"_class_name": "P", "vae": "d"}, {"className": "P"}, id="string-value-skipped"),
    pytest.param({"_class_name": "P", "vae": 3}, {"className": "P"}, id="number-value-skipped"),
    pytest.param({"_class_name": "P", "vae": None}, {"className": "P"}, id="null-value-skipped"),
    pytest.param({"_class_name": "P", "flag": False}, {"className": "P"}, id="boolean-value-skipped"),
    pytest.param({"_class_name": "P", "_private": ["d", "V"]}, {"className": "P"}, id="underscore-keys-skipped"),
    pytest.param(
        {
            "_class_name": "P",
            "vae": {
                "_class_name": "A",
                "class_name": "B",
                "className": "C",
                "type": "D",
                "_library": "L1",
                "library": "L2",
            },
        },
        {"className": "P", "vae": {"library": "L1", "type": "A"}},
        id="object-form-first-names-win",
    ),
    pytest.param(
        {
            "_class_name": "P",
            "vae": {"_class_name": "", "class_name": "", "className": "", "type": "D", "library": "L2"},
        },
        {"className": "P", "vae": {"library": "L2", "type": "D"}},
        id="object-form-first-non-empty",
    ),
    pytest.param(
        {"_class_name": "P", "vae": {"class_name": "B"}},
        {"className": "P", "vae": {"type": "B"}},
        id="object-form-type-only",
    ),
    pytest.param({"_class_name": "P", "vae": {"other": "x"}}, {"className": "P"}, id="object-form-empty-skipped"),
    pytest.param(
        {"class_name": "Q", "vae": ["d", "V"]},
        {"className": "Q", "vae": {"library": "d", "type": "V"}},
        id="class_name-fallback",
    ),
    pytest.param({"className": "R"}, {"className": "R"}, id="className-fallback"),
    pytest.param({"_class_name": "", "class_name": "S"}, {"className": "S"}, id="first-non-empty-class-name"),
    pytest.param(
        {"vae": ["d", "V"]}, {"vae": {"library": "d", "type": "V"}}, id="no-class-name-still-records-components"
    ),
    pytest.param(
        {"_class_name": "P", "UNet": ["d", "U"]},
        {"className": "P", "transformer": {"library": "d", "type": "U"}},
        id="keys-mapped-lowercased",
    ),
    pytest.param(
        {"_class_name": "P", "Text_Encoder": ["t", "T"]},
        {"className": "P", "textEncoder": {"library": "t", "type": "T"}},
        id="text-encoder-lowercased",
    ),
    pytest.param(
        {"_class_name": "P", "Image_Encoder": ["t", "I"]},
        {"className": "P", "additionalComponents": {"Image_Encoder": {"library": "t", "type": "I"}}},
        id="additional-keeps-original-key",
    ),
    pytest.param(
        {"_class_name": "P", "transformer": ["d", "T"]},
        {"className": "P", "transformer": {"library": "d", "type": "T"}},
        id="transformer",
    ),
    pytest.param(
        {"_class_name": "P", "_diffusers_version": "0.30.0"}, {"className": "P"}, id="version-not-in-pipeline"
    ),
]


@pytest.mark.parametrize(("data", "expected"), INDEX_CASES)
def test_model_index_components_are_read_as_in_section_6_3(data, expected):
    assert matching.pipeline_from_model_index(data) == expected


def test_q7_transformer_and_unet_both_map_to_transformer():
    out = matching.pipeline_from_model_index({"_class_name": "P", "transformer": ["d", "T"], "unet": ["d", "U"]})
    assert out["className"] == "P"
    assert out["transformer"] in ({"library": "d", "type": "T"}, {"library": "d", "type": "U"})
    assert "additionalComponents" not in out


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({}, id="empty"),
        pytest.param({"_diffusers_version": "0.30.0"}, id="version-only"),
        pytest.param({"_class_name": "", "requires_safety_checker": True}, id="empty-class-and-flags"),
        pytest.param({"vae": [], "image_encoder": None}, id="nothing-recordable"),
    ],
)
def test_a_model_index_without_metadata_records_nothing(data):
    with pytest.raises(matching.ModelIndexError):
        matching.pipeline_from_model_index(data)


# --- section 9: the seed page end to end ----------------------------------------------------------


SEED_PATCH = {
    "spec": {"diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}}
}


def test_seed_step_1_the_runtime_reason_matches_the_seed_page(k):
    sel = matching.select(k.qwen(), [k.qwen_pipeline_runtime()], namespace="default")
    assert sel.selected is None
    head, items = k.excluded_items(sel.error)
    assert head == (
        "no runtime found to support model diffusers with format diffusers in namespace default. "
        "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped)"
    )
    assert items == {
        "srt-qwen-image-pipeline (model format 'mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0' "
        "not in supported formats: diffusion pipeline required by runtime but not specified in model)"
    }


def test_seed_step_2_the_planned_patch_is_the_seed_patch(k):
    plan = matching.pipeline_patch(k.qwen(), k.qwen_pipeline_runtime())
    assert plan.patch == SEED_PATCH
    assert plan.entry == 0
    assert plan.blocked == ()


def test_seed_step_2_merging_the_patch_makes_the_model_compatible(k):
    patched = matching.merge_patch(k.qwen(), SEED_PATCH)
    assert patched["spec"]["diffusionPipeline"] == SEED_PATCH["spec"]["diffusionPipeline"]
    report = matching.check(patched, k.qwen_pipeline_runtime())
    assert report.compatible is True
    assert report.reasons == ()
    assert report.warnings == ()


def test_seed_step_3_the_patched_model_scores_30_raw(k):
    patched = matching.merge_patch(k.qwen(), SEED_PATCH)
    assert matching.score(patched, k.qwen_pipeline_runtime()) == 30


def test_seed_step_3_the_patched_model_scores_4_with_crd_defaults(k):
    patched = matching.merge_patch(k.qwen(), SEED_PATCH)
    assert matching.score(patched, matching.with_crd_defaults(k.qwen_pipeline_runtime())) == 4


def test_seed_step_4_the_pipeline_runtime_ranks_first_30_over_15(k):
    patched = matching.merge_patch(k.qwen(), SEED_PATCH)
    sel = matching.select(patched, [k.qwen_plain_runtime(), k.qwen_pipeline_runtime()], namespace="default")
    assert [(m.name, m.score, m.is_cluster) for m in sel.compatible] == [
        ("srt-qwen-image-pipeline", 30, True),
        ("srt-qwen-image", 15, True),
    ]
    assert sel.selected == "srt-qwen-image-pipeline"
    assert sel.error is None


def test_seed_step_4_with_crd_defaults_the_scores_are_4_and_2(k):
    patched = matching.with_crd_defaults(matching.merge_patch(k.qwen(), SEED_PATCH))
    rts = [matching.with_crd_defaults(k.qwen_plain_runtime()), matching.with_crd_defaults(k.qwen_pipeline_runtime())]
    sel = matching.select(patched, rts, namespace="default")
    assert [(m.name, m.score) for m in sel.compatible] == [("srt-qwen-image-pipeline", 4), ("srt-qwen-image", 2)]


def test_seed_step_4_the_plain_runtime_also_matches_the_unpatched_model(k):
    sel = matching.select(k.qwen(), [k.qwen_plain_runtime(), k.qwen_pipeline_runtime()], namespace="default")
    assert sel.selected == "srt-qwen-image"
    assert [m.score for m in sel.compatible] == [15]
    assert set(sel.excluded) == {"srt-qwen-image-pipeline"}


def test_seed_step_5_a_newer_dev_version_gives_the_verified_text(k):
    model = matching.merge_patch(
        k.qwen(modelFormat=k.ref("diffusers", "0.35.0.dev0"), modelFramework=k.ref("diffusers", "0.35.0.dev0")),
        SEED_PATCH,
    )
    for rt in (k.qwen_pipeline_runtime(), k.qwen_plain_runtime()):
        report = matching.check(model, rt)
        assert report.reasons == (
            "model format 'mt:diffusers:0.35.0.dev0:QwenImagePipeline:diffusers:0.35.0.dev0' not in supported "
            "formats: format version mismatch (model=0.35.0.dev0, runtime=0.34.0.dev0), framework version "
            "mismatch (model=0.35.0.dev0, runtime=0.34.0.dev0)",
        )


def test_seed_step_5_greater_than_or_equal_does_not_help_a_dev_version(k):
    model = matching.merge_patch(
        k.qwen(modelFormat=k.ref("diffusers", "0.34.0.dev0"), modelFramework=k.ref("diffusers", "0.34.0.dev0")),
        SEED_PATCH,
    )
    rt = k.qwen_pipeline_runtime(
        modelFormat=k.ref("diffusers", "0.35.0.dev0", "GreaterThanOrEqual"),
        modelFramework=k.ref("diffusers", "0.35.0.dev0", "GreaterThanOrEqual"),
    )
    assert matching.check(model, rt).compatible is False


def test_seed_step_5_a_release_version_fails_both_runtimes(k):
    model = matching.merge_patch(
        k.qwen(modelFormat=k.ref("diffusers", "0.34.0"), modelFramework=k.ref("diffusers", "0.34.0")), SEED_PATCH
    )
    sel = matching.select(model, [k.qwen_plain_runtime(), k.qwen_pipeline_runtime()], namespace="default")
    assert sel.selected is None
    assert set(sel.excluded) == {"srt-qwen-image", "srt-qwen-image-pipeline"}


def test_seed_the_pipeline_recorded_from_the_seed_index_passes_an_entry_requiring_a_diffusers_transformer(k):
    model = k.model(
        "sd",
        modelFormat=k.ref("diffusers", "0.24.0"),
        modelFramework=k.ref("diffusers", "0.24.0"),
        modelArchitecture="StableDiffusionPipeline",
        diffusionPipeline=matching.pipeline_from_model_index(SEED_INDEX),
    )
    e = k.entry(
        modelFormat=k.ref("diffusers", "0.24.0"),
        modelFramework=k.ref("diffusers", "0.24.0"),
        modelArchitecture="StableDiffusionPipeline",
        diffusionPipeline={
            "className": "StableDiffusionPipeline",
            "transformer": {"library": "diffusers"},
            "additionalComponents": {"safety_checker": {"type": "StableDiffusionSafetyChecker"}},
        },
        autoSelect=True,
    )
    assert matching.check(model, k.csr("rt", e)).compatible is True


# --- pipeline_patch ------------------------------------------------------------------------------------


def test_no_patch_is_planned_for_a_model_that_already_passes(k):
    patched = matching.merge_patch(k.qwen(), SEED_PATCH)
    assert matching.pipeline_patch(patched, k.qwen_pipeline_runtime()).patch is None


PATCH_SCENARIOS = [
    pytest.param(
        {"className": "QwenImagePipeline"},
        {"className": "QwenImagePipeline", "vae": {}, "tokenizer": {"type": "Tok"}},
        id="add-missing-components",
    ),
    pytest.param(
        {"className": "QwenImagePipeline", "additionalComponents": {"x": {}}},
        {"additionalComponents": {"safety_checker": {"library": "diffusers"}, "processor": {}}},
        id="add-additional-components",
    ),
    pytest.param(
        {},
        {"className": "QwenImagePipeline", "scheduler": {"library": "diffusers", "type": "S"}},
        id="fill-an-empty-pipeline",
    ),
    pytest.param(
        {"className": "QwenImagePipeline", "vae": {"type": "AutoencoderKL"}},
        {"vae": {"library": "diffusers"}},
        id="fill-an-empty-library-of-a-recorded-component",
    ),
]


@pytest.mark.parametrize(("model_pipeline", "entry_pipeline"), PATCH_SCENARIOS)
def test_merging_the_planned_patch_makes_the_model_pass(k, model_pipeline, entry_pipeline):
    model = k.qwen(diffusionPipeline=copy.deepcopy(model_pipeline))
    rt = k.qwen_pipeline_runtime(diffusionPipeline=entry_pipeline)
    plan = matching.pipeline_patch(model, rt)
    assert plan.patch is not None
    assert set(plan.patch) == {"spec"}
    assert set(plan.patch["spec"]) == {"diffusionPipeline"}
    patched = matching.merge_patch(model, plan.patch)
    assert matching.check(patched, rt).compatible is True
    assert plan.to_dict()["patch"] == plan.patch


CONFLICT_SCENARIOS = [
    pytest.param(
        {"className": "QwenImagePipeline", "transformer": {"library": "other", "type": "T"}},
        {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}},
        "transformer",
        id="recorded-component-library-differs",
    ),
    pytest.param({"className": "Other"}, {"className": "QwenImagePipeline"}, None, id="recorded-class-differs"),
]


@pytest.mark.parametrize(("model_pipeline", "entry_pipeline", "component"), CONFLICT_SCENARIOS)
def test_a_conflicting_recorded_value_is_either_replaced_whole_or_explained(
    k, model_pipeline, entry_pipeline, component
):
    # Section 9 merge-patch notes: to replace a recorded component, send the whole object.
    # The spec does not say whether the planner overrides recorded values; either outcome
    # must be coherent.
    model = k.qwen(diffusionPipeline=copy.deepcopy(model_pipeline))
    rt = k.qwen_pipeline_runtime(diffusionPipeline=entry_pipeline)
    plan = matching.pipeline_patch(model, rt)
    if plan.patch is None:
        assert plan.blocked
    else:
        patched = matching.merge_patch(model, plan.patch)
        assert matching.check(patched, rt).compatible is True
        if component:
            assert component in plan.patch["spec"]["diffusionPipeline"]


def test_a_runtime_that_fails_for_non_pipeline_reasons_is_blocked(k):
    rt = k.qwen_pipeline_runtime(modelArchitecture="FluxPipeline")
    plan = matching.pipeline_patch(k.qwen(), rt)
    assert plan.blocked


# --- merge_patch (RFC 7386) -------------------------------------------------------------------------------


RFC_7386_CASES = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"a": "foo"}, None, None),
    ({"a": "foo"}, "bar", "bar"),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(
    ("target", "patch", "expected"), RFC_7386_CASES, ids=[f"rfc7386-appendix-{i}" for i in range(1, 16)]
)
def test_merge_patch_follows_the_rfc_7386_examples(target, patch, expected):
    assert matching.merge_patch(copy.deepcopy(target), patch) == expected


def test_merge_patch_merges_additional_components_key_by_key(k):
    model = k.qwen(diffusionPipeline={"additionalComponents": {"a": {"library": "x"}}})
    out = matching.merge_patch(model, {"spec": {"diffusionPipeline": {"additionalComponents": {"b": {}}}}})
    assert out["spec"]["diffusionPipeline"]["additionalComponents"] == {"a": {"library": "x"}, "b": {}}


def test_merge_patch_null_removes_the_pipeline(k):
    model = k.qwen(diffusionPipeline={"className": "X"})
    out = matching.merge_patch(model, {"spec": {"diffusionPipeline": None}})
    assert "diffusionPipeline" not in out["spec"]


@pytest.mark.parametrize(
    ("model_pipeline", "entry_pipeline", "expected"),
    [
        pytest.param(None, {}, {}, id="empty-pipeline-requirement-sends-an-empty-object"),
        pytest.param(
            {"className": "QwenImagePipeline"}, {"tokenizer": {}}, {"tokenizer": {}}, id="empty-component-requirement"
        ),
        pytest.param(
            None,
            {"additionalComponents": {"s": {}}},
            {"additionalComponents": {"s": {}}},
            id="empty-additional-component-requirement",
        ),
        pytest.param(
            {"className": "QwenImagePipeline", "transformer": {"type": "T"}},
            {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}},
            {"transformer": {"library": "diffusers"}},
            id="only-the-missing-library",
        ),
    ],
)
def test_the_planned_patch_is_the_smallest(k, model_pipeline, entry_pipeline, expected):
    model = k.qwen() if model_pipeline is None else k.qwen(diffusionPipeline=model_pipeline)
    plan = matching.pipeline_patch(model, k.qwen_pipeline_runtime(diffusionPipeline=entry_pipeline))
    assert plan.patch == {"spec": {"diffusionPipeline": expected}}


def test_the_smallest_patch_over_all_entries_is_chosen(k):
    # Not from the OME spec: from PatchPlan's own contract ("The smallest merge patch of a
    # model's diffusionPipeline that makes it pass a runtime", matching/results.py).
    big = dict(k.qwen_pipeline_runtime()["spec"]["supportedModelFormats"][0])
    big["diffusionPipeline"] = {"className": "QwenImagePipeline", "scheduler": {"library": "diffusers"}, "vae": {}}
    small = dict(big)
    small["diffusionPipeline"] = {"className": "QwenImagePipeline"}
    plan = matching.pipeline_patch(k.qwen(), k.csr("rt", big, small))
    assert plan.patch == {"spec": {"diffusionPipeline": {"className": "QwenImagePipeline"}}}
    assert plan.entry == 1


def test_a_blocked_entry_does_not_hide_a_patchable_one(k):
    blocked = dict(k.qwen_pipeline_runtime()["spec"]["supportedModelFormats"][0])
    blocked["modelArchitecture"] = "FluxPipeline"
    plan = matching.pipeline_patch(
        k.qwen(), k.csr("rt", blocked, dict(k.qwen_pipeline_runtime()["spec"]["supportedModelFormats"][0]))
    )
    assert plan.patch == SEED_PATCH
    assert plan.entry == 1
