"""Each assertion kind over the demo's verdicts: it passes where OME's choice holds, and fails
naming the subject and OME's reason where it does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import matching
from matching.policy import Assertion, Baseline, Outcome, Subjects, Verdicts, evaluate

ROOT = Path(__file__).resolve().parents[2]
CBM = "ClusterBaseModel"


@pytest.fixture(scope="module")
def demo() -> Verdicts:
    return Verdicts(matching.read_tree([ROOT / "demo", ROOT / "catalog/runtimes"]))


def assertion(kind: str, *, scope: dict[str, Any] | None = None, **fields: Any) -> Assertion:
    return Assertion("p", "a", kind, "error", Subjects(**(scope or {})), **fields)


def run(
    verdicts: Verdicts, kind: str, *, scope: dict[str, Any] | None = None, evaluate_with: Any = None, **fields: Any
) -> Outcome:
    (outcome,) = evaluate([assertion(kind, scope=scope, **fields)], verdicts, **(evaluate_with or {}))
    return outcome


def messages(outcome: Outcome) -> list[str]:
    return [failure.message for failure in outcome.failures]


def test_served_by_passes_when_ome_picks_the_runtime(demo: Verdicts) -> None:
    outcome = run(demo, "servedBy", runtime="team-a-sglang-llama",
                  scope={"namespaces": ("team-a",), "names": ("llama-3-3-70b-instruct",)})  # fmt: skip

    assert (outcome.passed, outcome.checked) == (True, 1)


def test_served_by_fails_with_the_ranking_when_the_runtime_is_outranked(demo: Verdicts) -> None:
    outcome = run(demo, "servedBy", runtime="vllm-llama-3-3-70b-instruct",
                  scope={"namespaces": ("team-a",), "names": ("llama-3-3-70b-instruct",)})  # fmt: skip

    assert messages(outcome) == [
        "ClusterBaseModel llama-3-3-70b-instruct in team-a: OME picks ServingRuntime team-a/team-a-sglang-llama "
        "(score 2), not vllm-llama-3-3-70b-instruct"
    ]
    assert outcome.failures[0].reason == (
        "vllm-llama-3-3-70b-instruct is compatible (score 2) but ranks below "
        "ServingRuntime team-a/team-a-sglang-llama (score 2)"
    )


def test_served_by_fails_with_omes_exclusion_reason(demo: Verdicts) -> None:
    outcome = run(demo, "servedBy", runtime="srt-qwen-image-pipeline",
                  scope={"namespaces": ("research",), "names": ("qwen-image-pvc",)})  # fmt: skip

    assert outcome.failures[0].reason is not None
    assert outcome.failures[0].reason.endswith("diffusion pipeline required by runtime but not specified in model")


def test_has_runtime_fails_with_omes_error(demo: Verdicts) -> None:
    outcome = run(demo, "hasRuntime", scope={"namespaces": ("research",), "names": ("llama-3-1-8b-sft",)})

    assert messages(outcome) == ["BaseModel research/llama-3-1-8b-sft in research: OME picks no runtime"]
    assert str(outcome.failures[0].reason).startswith("no runtime found to support model safetensors")


def test_a_namespace_scope_leaves_out_cluster_scope_rows(demo: Verdicts) -> None:
    outcome = run(demo, "hasRuntime", scope={"namespaces": ("*",), "names": ("llama-3-3-70b-instruct",)})

    assert outcome.checked == 3


def test_not_blocked_names_the_blocked_services_and_omes_error(demo: Verdicts) -> None:
    outcome = run(demo, "notBlocked", scope={"namespaces": ("research",)})

    assert messages(outcome) == [
        "InferenceService research/command-r-plus: OME blocks it",
        "InferenceService research/llama-8b-sft: OME blocks it",
    ]
    assert "model format name is required" in str(outcome.failures[0].reason)


def test_pick_count_checks_both_bounds(demo: Verdicts) -> None:
    scope = {"namespaces": ("team-a",)}

    assert run(demo, "pickCount", runtime="team-a-sglang-llama", at_least=2, at_most=2, scope=scope).passed
    failed = run(demo, "pickCount", runtime="team-a-sglang-llama", at_most=1, scope=scope)
    assert messages(failed) == [
        "team-a-sglang-llama is the pick for 2 model(s), not at most 1: "
        "deepseek-r1-distill-llama-70b, llama-3-3-70b-instruct"
    ]


def test_not_shadowed_finds_a_runtime_that_always_loses_in_scope(demo: Verdicts) -> None:
    outcome = run(
        demo, "notShadowed", scope={"namespaces": ("team-a",), "names": ("srt-deepseek-r1-distill-llama-70b",)}
    )

    assert messages(outcome) == [
        "ClusterServingRuntime srt-deepseek-r1-distill-llama-70b matches 2 row(s) but OME never picks it"
    ]
    assert "ranks first" in str(outcome.failures[0].reason)


def test_min_score_fails_below_the_floor(demo: Verdicts) -> None:
    scope = {"namespaces": ("team-a",), "names": ("llama-3-3-70b-instruct",)}

    assert run(demo, "minScore", score=2, scope=scope).passed
    assert len(run(demo, "minScore", score=3, scope=scope).failures) == 1


def test_pick_unchanged_reports_drift_from_the_baseline(demo: Verdicts) -> None:
    row = ((CBM, "", "llama-3-3-70b-instruct"), "team-a")
    baseline = Baseline(picks={row: ("ClusterServingRuntime", "", "vllm-llama-3-3-70b-instruct")})

    outcome = run(
        demo, "pickUnchanged", scope={"names": ("llama-3-3-70b-instruct",)}, evaluate_with={"baseline": baseline}
    )

    assert outcome.checked == 1
    assert messages(outcome) == [
        "ClusterBaseModel llama-3-3-70b-instruct in team-a: OME's pick drifted from "
        "ClusterServingRuntime vllm-llama-3-3-70b-instruct to ServingRuntime team-a/team-a-sglang-llama (score 2)"
    ]


def test_decision_unchanged_compares_verdict_and_runtime(demo: Verdicts) -> None:
    baseline = demo.baseline()
    key = ("InferenceService", "team-a", "llama-70b-chat")
    moved = Baseline(decisions={**baseline.decisions, key: ("selected", None, ("ClusterServingRuntime", "", "x"))})

    assert run(demo, "decisionUnchanged", evaluate_with={"baseline": baseline}).passed
    outcome = run(demo, "decisionUnchanged", evaluate_with={"baseline": moved})
    assert [failure.subject for failure in outcome.failures] == ["InferenceService team-a/llama-70b-chat"]


def test_baseline_assertions_without_a_baseline_pass_and_say_why(demo: Verdicts) -> None:
    outcome = run(demo, "pickUnchanged")

    assert (outcome.passed, outcome.note) == (True, "no baseline to compare with")


def test_a_baseline_survives_its_json_form(demo: Verdicts) -> None:
    import json

    baseline = demo.baseline()

    assert matching.policy.baseline_from_dict(json.loads(json.dumps(baseline.to_dict()))) == baseline


def test_label_selectors_choose_subjects_by_their_labels(demo: Verdicts) -> None:
    labels = {(CBM, "", "llama-3-3-70b-instruct"): {"tier": "prod"}}
    scope = {"match_labels": (("tier", "prod"),)}

    outcome = run(demo, "hasRuntime", scope=scope, evaluate_with={"labels": labels})

    assert outcome.checked == 4


def test_an_assertion_of_other_clusters_is_left_out(demo: Verdicts) -> None:
    prod_only = [assertion("hasRuntime", scope={"clusters": ("prod-*",), "names": ("llama-3-3-70b-instruct",)})]

    assert [outcome.checked for outcome in evaluate(prod_only, demo, cluster="prod-eu")] == [4]
    assert evaluate(prod_only, demo, cluster="dev") == []
