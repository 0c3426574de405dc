"""Conformance: version matching through the matcher (section 3, quirks Q14/Q15) and the scorer
(section 4.1-4.2, quirks Q2-Q4, Q21), through `matching.check` and `matching.score`.
"""

from __future__ import annotations

import pytest

import matching

# Section 3.4, all 43 verified rows: (runtime version, operator or None, model version, match).
ROWS = [
    ("1.0.0", None, "1.0.0", True),
    ("1.0.0", None, "1.0.1", False),
    ("1", None, "1.0.0", True),
    ("1.0", "Equal", "1.0.0", True),
    ("v1.0.0", None, "1.0.0", True),
    ("v1.0", "Equal", "1.0.0", True),
    ("v2.0.0", None, "v2.0.0", True),
    ("1.8.0", "GreaterThan", "1.7.0", True),
    ("1.7.0", "GreaterThan", "1.8.0", False),
    ("1.8.0", "GreaterThan", "1.8.0", False),
    ("1.8.0", "GreaterThanOrEqual", "1.8.0", True),
    ("1.9.0", "GreaterThanOrEqual", "1.8.0", True),
    ("4.51.0", "GreaterThanOrEqual", "4.43.1", True),
    ("4.43.1", "GreaterThanOrEqual", "4.51.0", False),
    ("1.10.0", "GreaterThan", "1.9.0", True),
    ("2.0", "GreaterThan", "1.0.0", False),
    ("1.0", "GreaterThan", "1.0.0", False),
    ("2.0", "GreaterThan", "1.0", True),
    ("2", "GreaterThan", "1", True),
    ("v2", "GreaterThan", "v1", True),
    ("v2.0.0", "GreaterThanOrEqual", "1.0.0", False),
    ("1.0.0", "GreaterThan", "v0.9.0", False),
    ("0.34.0.dev0", None, "0.34.0.dev0", True),
    ("0.34.0.dev0", "GreaterThanOrEqual", "0.34.0.dev0", True),
    ("0.35.0", "GreaterThanOrEqual", "0.34.0.dev0", False),
    ("0.34.0.dev0", None, "0.34.0", False),
    ("4.51.0.dev0", "GreaterThanOrEqual", "4.51.0", False),
    ("4.51.0", "GreaterThanOrEqual", "4.50.0.dev0", False),
    ("1.8.0-dev", "GreaterThan", "1.8.0-dev", True),
    ("1.8.0-dev", "GreaterThan", "1.8.0-alpha", False),
    ("1.8.0+build1", "GreaterThanOrEqual", "1.8.0", False),
    ("1.0.0-rc.1", None, "1.0.0-rc.1", True),
    ("1.0.0-rc.1", None, "1.0.0-rc.2", False),
    ("1.2.3.4", None, "1.2.3.4", True),
    ("1.2.3.4", "GreaterThan", "1.2.2", False),
    ("V1.0.0", None, "V1.0.0", False),
    ("1.2-rc1", None, "1.2-rc1", False),
    ("01.0.0", None, "01.0.0", False),
    ("1.0.0rc1", None, "1.0.0rc1", False),
    ("", None, "", False),
    ("1.0.0", "Foo", "1.0.0", True),
    ("1.0.0", "Foo", "1.0", False),
    ("2.0.0", "greaterthan", "1.0.0", False),
]

ROW_IDS = [f"row{i:02d}-{r or 'empty'}-{op or 'none'}-{m or 'empty'}" for i, (r, op, m, _) in enumerate(ROWS, start=1)]


@pytest.mark.parametrize(("rt_version", "operator", "model_version", "match"), ROWS, ids=ROW_IDS)
def test_format_versions_match_as_in_the_verified_table(k, rt_version, operator, model_version, match):
    model = k.model(modelFormat=k.ref("safetensors", model_version))
    rt = k.csr("rt", k.entry(modelFormat=k.ref("safetensors", rt_version, operator), autoSelect=True))
    report = matching.check(model, rt)
    assert report.compatible is match
    if not match:
        assert report.entries[0].mismatch == f"format version mismatch (model={model_version}, runtime={rt_version})"


@pytest.mark.parametrize(("rt_version", "operator", "model_version", "match"), ROWS, ids=ROW_IDS)
def test_framework_versions_match_as_in_the_verified_table(k, rt_version, operator, model_version, match):
    model = k.model(modelFormat=k.ref("f"), modelFramework=k.ref("transformers", model_version))
    rt = k.csr(
        "rt",
        k.entry(modelFormat=k.ref("f"), modelFramework=k.ref("transformers", rt_version, operator), autoSelect=True),
    )
    report = matching.check(model, rt)
    assert report.compatible is match
    if not match:
        assert report.entries[0].mismatch == f"framework version mismatch (model={model_version}, runtime={rt_version})"


@pytest.mark.parametrize(("rt_version", "operator", "model_version", "match"), ROWS, ids=ROW_IDS)
def test_the_scorer_uses_the_same_version_match(k, rt_version, operator, model_version, match):
    model = k.model(modelFormat=k.ref("safetensors", model_version))
    rt = k.csr("rt", k.entry(modelFormat=k.ref("safetensors", rt_version, operator), autoSelect=True))
    assert matching.score(model, rt) == (10 if match else 0)


def test_the_model_side_operator_is_ignored(k):
    model = k.model(modelFormat=k.ref("safetensors", "1.0.0", "GreaterThan"))
    rt = k.csr("rt", k.entry(modelFormat=k.ref("safetensors", "1.0.0"), autoSelect=True))
    assert matching.check(model, rt).compatible is True


def test_q15_greater_than_or_equal_makes_the_runtime_version_an_upper_bound(k):
    entry = k.llama_entry(modelFramework=k.ref("transformers", "4.51.0", "GreaterThanOrEqual"))
    older = k.llama(modelFramework=k.ref("transformers", "4.43.1"))
    newer = k.llama(modelFramework=k.ref("transformers", "4.52.0"))
    assert matching.check(older, k.csr("rt", entry)).compatible is True
    assert matching.check(newer, k.csr("rt", entry)).compatible is False


def test_version_latest_is_accepted_and_never_matches(k):
    model = k.model(modelFormat=k.ref("safetensors", "latest"))
    rt = k.csr("rt", k.entry(modelFormat=k.ref("safetensors", "latest"), autoSelect=True))
    report = matching.check(model, rt)
    assert report.compatible is False
    assert report.reasons == (
        "model format 'mt:safetensors:latest' not in supported formats: format version mismatch (model=latest, runtime=latest)",
    )


def test_operator_foo_is_accepted_and_behaves_like_equal_with_precision(k):
    model = k.model(modelFormat=k.ref("safetensors", "1.0.0"))
    same = k.csr("rt", k.entry(modelFormat=k.ref("safetensors", "1.0.0", "Foo"), autoSelect=True))
    shorter = k.csr("rt", k.entry(modelFormat=k.ref("safetensors", "1.0", "Foo"), autoSelect=True))
    assert matching.check(model, same).compatible is True
    assert matching.check(model, shorter).reasons == (
        "model format 'mt:safetensors:1.0.0' not in supported formats: format version mismatch (model=1.0.0, runtime=1.0)",
    )


# --- 4.2 verified score table ------------------------------------------------------------------


def full(k, fmt_weight=None, fw_weight=None, priority=None, **extra):
    fields = {
        "modelFormat": k.ref("safetensors", "1.0.0", weight=fmt_weight),
        "modelFramework": k.ref("transformers", "4.51.0", weight=fw_weight),
        "modelArchitecture": "LlamaForCausalLM",
        "autoSelect": True,
    }
    if priority is not None:
        fields["priority"] = priority
    fields.update(extra)
    return fields


SCORE_TABLE = [
    pytest.param({}, 15, id="weights-absent-priority-absent-15"),
    pytest.param({"fmt_weight": 1, "fw_weight": 1}, 2, id="crd-weights-1-1-gives-2"),
    pytest.param({"priority": 2}, 30, id="priority-2-gives-30"),
    pytest.param({"fmt_weight": 1, "fw_weight": 1, "priority": 2}, 4, id="crd-weights-priority-2-gives-4"),
    pytest.param({"fmt_weight": 3, "priority": 3}, 24, id="format-weight-3-priority-3-gives-24"),
    pytest.param({"fmt_weight": -5}, 0, id="negative-format-weight-gives-0"),
    pytest.param({"fmt_weight": -20}, 0, id="score-never-negative"),
    pytest.param({"fmt_weight": 0, "fw_weight": 0}, 15, id="weight-0-means-defaults"),
    pytest.param({"fw_weight": 7}, 17, id="framework-weight-7"),
    pytest.param({"priority": 0}, 0, id="priority-0-gives-0"),
    pytest.param({"priority": 5, "autoSelect": False}, 0, id="autoSelect-false-entries-are-not-scored"),
    pytest.param({"priority": 5, "autoSelect": None}, 75, id="q4-autoSelect-absent-is-scored-75"),
]


@pytest.mark.parametrize(("kw", "expected"), SCORE_TABLE)
def test_the_runtime_score_follows_the_verified_table(k, kw, expected):
    kw = dict(kw)
    auto = kw.pop("autoSelect", True)
    e = full(k, **kw)
    if auto is None:
        del e["autoSelect"]
    else:
        e["autoSelect"] = auto
    assert matching.score(k.llama(), k.csr("rt", e)) == expected


def test_an_entry_with_versions_scores_15_against_a_model_without(k):
    model = k.model(modelFormat=k.ref("safetensors"), modelFramework=k.ref("transformers"))
    assert matching.score(model, k.csr("rt", full(k))) == 15


def test_an_entry_and_model_without_framework_score_10(k):
    model = k.model(modelFormat=k.ref("safetensors", "1.0.0"))
    e = k.entry(modelFormat=k.ref("safetensors", "1.0.0"), autoSelect=True)
    assert matching.score(model, k.csr("rt", e)) == 10


def test_an_entry_without_modelFormat_scores_5_for_the_framework(k):
    e = k.entry(modelFramework=k.ref("transformers", "4.51.0"), autoSelect=True)
    assert matching.score(k.llama(), k.csr("rt", e)) == 5


def test_q2_a_wrong_architecture_entry_with_priority_9_lifts_the_score_to_135(k):
    rt = k.csr("rt", full(k), full(k, priority=9, modelArchitecture="MistralForCausalLM"))
    assert matching.score(k.llama(), rt) == 135


def test_q2_the_pipeline_check_never_affects_the_score(k):
    rt = k.csr("rt", full(k, diffusionPipeline={"className": "X"}))
    assert matching.score(k.llama(), rt) == 15


@pytest.mark.parametrize(
    "entry_change",
    [
        pytest.param({"modelFormat": {"name": "pytorch", "version": "1.0.0"}}, id="format-name-differs"),
        pytest.param({"modelFormat": {"name": "safetensors", "version": "2.0.0"}}, id="format-version-differs"),
        pytest.param({"modelFramework": {"name": "vllm"}}, id="framework-name-differs"),
        pytest.param({"modelFramework": {"name": "transformers", "version": "4.50.0"}}, id="framework-version-differs"),
    ],
)
def test_a_format_or_framework_mismatch_scores_0(k, entry_change):
    assert matching.score(k.llama(), k.csr("rt", full(k, **entry_change))) == 0


def test_a_framework_on_only_the_entry_scores_0(k):
    model = k.model(modelFormat=k.ref("safetensors", "1.0.0"))
    assert matching.score(model, k.csr("rt", full(k))) == 0


def test_a_framework_on_only_the_model_scores_0(k):
    e = k.entry(modelFormat=k.ref("safetensors", "1.0.0"), autoSelect=True)
    assert matching.score(k.llama(), k.csr("rt", e)) == 0


def test_architecture_and_quantization_do_not_enter_the_score(k):
    rt = k.csr("rt", full(k, modelArchitecture="Other", quantization="int4"))
    assert matching.score(k.llama(), rt) == 15


def test_the_score_is_the_maximum_over_entries(k):
    rt = k.csr("rt", full(k, priority=2), full(k, priority=3), full(k, priority=1))
    assert matching.score(k.llama(), rt) == 45


def test_a_runtime_without_entries_scores_0(k):
    assert matching.score(k.llama(), k.csr("rt")) == 0


def test_model_side_weights_are_ignored(k):
    model = k.llama(
        modelFormat=k.ref("safetensors", "1.0.0", weight=100),
        modelFramework=k.ref("transformers", "4.51.0", weight=100),
    )
    assert matching.score(model, k.csr("rt", full(k))) == 15


# --- CRD defaults (section 1.2, Q21) --------------------------------------------------------------


def test_crd_defaults_make_a_full_match_score_2_times_priority(k):
    rt = matching.with_crd_defaults(k.csr("rt", full(k, priority=3)))
    assert matching.score(k.llama(), rt) == 6


def test_crd_defaults_fill_operator_equal_and_weight_1(k):
    rt = matching.with_crd_defaults(k.csr("rt", full(k)))
    e = rt["spec"]["supportedModelFormats"][0]
    assert e["modelFormat"]["operator"] == "Equal"
    assert e["modelFormat"]["weight"] == 1
    assert e["modelFramework"]["operator"] == "Equal"
    assert e["modelFramework"]["weight"] == 1


def test_crd_defaults_keep_explicit_values(k):
    e = full(k, fmt_weight=3)
    e["modelFramework"]["operator"] = "GreaterThanOrEqual"
    rt = matching.with_crd_defaults(k.csr("rt", e))
    out = rt["spec"]["supportedModelFormats"][0]
    assert out["modelFormat"]["weight"] == 3
    assert out["modelFramework"]["operator"] == "GreaterThanOrEqual"
    assert matching.score(k.llama(), rt) == 4


def test_crd_defaults_do_not_invent_absent_objects(k):
    rt = matching.with_crd_defaults(k.csr("rt", k.entry(modelFormat=k.ref("safetensors", "1.0.0"), autoSelect=True)))
    assert "modelFramework" not in rt["spec"]["supportedModelFormats"][0]


def test_crd_defaults_apply_to_models_too(k):
    model = matching.with_crd_defaults(k.llama())
    assert model["spec"]["modelFormat"]["weight"] == 1
    assert model["spec"]["modelFormat"]["operator"] == "Equal"


def test_crd_defaults_keep_the_verdict(k):
    rt = k.csr("rt", full(k))
    assert matching.check(k.llama(), matching.with_crd_defaults(rt)).compatible is True


def test_entry_reports_carry_the_entry_score_with_its_priority(k):
    report = matching.check(k.llama(), k.csr("rt", full(k, priority=2)))
    assert report.entries[0].score == 30
