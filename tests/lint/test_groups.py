"""Lint findings grouped by root cause, with their fixes and quirks in words."""

from __future__ import annotations

from typing import Any

import yaml

import matching
from lint.rules import FindingGroup, LintReport, quirks_in
from tests.lint.test_lint import entry, key, lint, runtime
from tests.support.manifests import llama_model as model

QWEN2 = "Qwen2ForCausalLM"


def group(report: LintReport, cause: str) -> FindingGroup:
    found = [group for group in report.groups if group.cause == cause]
    assert len(found) == 1, [g.key for g in report.groups]
    return found[0]


def purpose_built_cluster() -> list[dict[str, Any]]:
    """One runtime without modelSizeRange that serves every Qwen2 model, and a purpose-built
    runtime (a range that fits) for each of three models of other sizes: on equal scores the
    open runtime wins all three tie-breaks (Q16)."""
    sizes = {"qwen-3b": ("3B", "2B", "4B"), "qwen-14b": ("14B", "13B", "15B"), "qwen-72b": ("72B", "70B", "75B")}
    objects: list[dict[str, Any]] = [runtime("generic-qwen", entry(modelArchitecture=QWEN2))]
    for name, (size, low, high) in sizes.items():
        objects.append(model(name, modelArchitecture=QWEN2, modelParameterSize=size))
        objects.append(runtime(f"srt-{name}", entry(modelArchitecture=QWEN2), modelSizeRange={"min": low, "max": high}))
    return objects


def test_one_runtime_without_a_range_outranking_many_is_one_group_with_a_count() -> None:
    report = lint(*purpose_built_cluster())

    # Per outranked runtime: a tie-break finding and a shadowed finding, six in all ...
    assert len(report.by_code("no-range-wins-size-tiebreak")) == 3
    assert len(report.by_code("shadowed")) == 3
    # ... and one root cause.
    found = group(report, "no-size-range")
    assert found.count == 6
    assert found.key == "no-size-range:ClusterServingRuntime generic-qwen"
    assert found.runtimes[0] == key("generic-qwen")
    assert set(found.runtimes[1:]) == {key("srt-qwen-3b"), key("srt-qwen-14b"), key("srt-qwen-72b")}
    assert "picks it over 3 runtime(s) whose range fits the model, for 3 model(s) (Q16)" in found.title
    assert found.severity == "warning"  # the shadowed findings' severity, over the tie-break's info
    assert len(report.groups) == 1
    assert report.to_dict()["group_counts"] == {"error": 0, "warning": 1, "info": 0}


def test_the_fix_of_a_missing_range_gives_the_range_its_models_span_and_the_what_if_confirms_it() -> None:
    objects = purpose_built_cluster()
    found = group(lint(*objects), "no-size-range")

    assert found.fix is not None
    assert found.fix.patch == {"spec": {"modelSizeRange": {"min": "3B", "max": "72B"}}}
    fixed = [found.fix.apply(obj) if obj["metadata"]["name"] == "generic-qwen" else obj for obj in objects]
    # After the fix the purpose-built runtimes win (the narrower range wins the tie-break), and
    # the group is gone.
    after = lint(*fixed)
    assert not [g for g in after.groups if g.cause == "no-size-range"]
    runtimes = [matching.with_crd_defaults(obj) for obj in fixed if obj["kind"] == "ClusterServingRuntime"]
    for name in ("qwen-3b", "qwen-14b", "qwen-72b"):
        model_obj = next(obj for obj in fixed if obj["metadata"]["name"] == name)
        assert matching.select(matching.with_crd_defaults(model_obj), runtimes).selected == f"srt-{name}"


def test_a_shadowed_runtime_is_fixed_by_disabling_it_and_a_score_problem_by_resetting_its_values() -> None:
    negative = entry(modelFormat={"name": "safetensors", "version": "1.0.0", "weight": -5})
    report = lint(model("llama"), runtime("low"), runtime("high", entry(priority=2)), runtime("negative", negative))

    shadowed = group(report, "shadowed")
    assert shadowed.fix is not None
    assert shadowed.fix.patch == {"spec": {"disabled": True}}
    score = group(report, "score-inputs")
    assert {finding.code for finding in score.findings} == {"negative-weight", "zero-score"}
    assert score.fix is not None
    obj = runtime("negative", negative)
    fixed = score.fix.apply(obj)
    assert fixed["spec"]["supportedModelFormats"][0]["modelFormat"]["weight"] == 1
    assert obj["spec"]["supportedModelFormats"][0]["modelFormat"]["weight"] == -5  # a copy
    assert yaml.safe_dump(fixed)


def test_quirk_codes_are_explained_in_words() -> None:
    report = lint(*purpose_built_cluster())
    found = group(report, "no-size-range")

    assert [code for code, _text in found.quirks] == ["Q16"]
    assert "without modelSizeRange beats every runtime with one" in found.quirks[0][1]
    assert quirks_in("(Q1) and Q22, Q1 again, Q999") == [
        ("Q1", quirks_in("Q1")[0][1]),
        ("Q22", quirks_in("Q22")[0][1]),
    ]
    assert found.to_dict()["quirks"] == [{"code": "Q16", "meaning": found.quirks[0][1]}]


def test_a_group_changes_signature_when_its_findings_change() -> None:
    objects = purpose_built_cluster()
    before = group(lint(*objects), "no-size-range")
    fewer = [obj for obj in objects if obj["metadata"]["name"] not in ("qwen-3b", "srt-qwen-3b")]
    after = group(lint(*fewer), "no-size-range")

    assert before.key == after.key
    assert before.signature != after.signature
    assert after.count == 4


def test_fixes_that_follow_from_a_runtimes_own_values() -> None:
    inverted = runtime("inverted", modelSizeRange={"min": "70B", "max": "7B"})
    empty_pipeline = runtime("empty-pipeline", entry(diffusionPipeline={}))
    inflated = runtime("inflated", entry(), entry(modelArchitecture="MistralForCausalLM", priority=9))
    report = lint(
        model("llama", modelParameterSize="8B"),
        inverted,
        empty_pipeline,
        inflated,
        runtime("honest", entry(priority=3)),
    )

    swap = group(report, "inverted-size-range").fix
    assert swap is not None
    assert swap.apply(inverted)["spec"]["modelSizeRange"] == {"min": "7B", "max": "70B"}
    removal = group(report, "empty-pipeline-requirement").fix
    assert removal is not None
    assert "diffusionPipeline" not in removal.apply(empty_pipeline)["spec"]["supportedModelFormats"][0]
    q2 = group(report, "score-from-unmatched-entry").fix
    assert q2 is not None
    fixed = q2.apply(inflated)["spec"]["supportedModelFormats"]
    assert [item.get("autoSelect") for item in fixed] == [True, False]
