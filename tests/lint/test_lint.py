"""Runtime lint over the demo cluster and small hand-made manifests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from access.scope import SYSTEM
from inventory.models import Cluster
from lint.rules import Finding, LintReport, lint_inventory
from lint.selectors import lint_report_get
from tests.support.inventory import inventory_from_objects
from tests.support.manifests import llama_model as model

PVC_MODEL = ("ClusterBaseModel", "", "qwen-image-pvc")
PIPELINE_RUNTIME = ("ClusterServingRuntime", "", "srt-qwen-image-pipeline")
CATALOG_RUNTIME = ("ClusterServingRuntime", "", "srt-qwen-image")
SEED_PATCH = {
    "spec": {"diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}}
}


@pytest.fixture(scope="module")
def report(demo: Cluster, django_db_blocker: Any) -> LintReport:
    with django_db_blocker.unblock():
        return lint_report_get(demo, scope=SYSTEM)


def only(findings: list[Finding], runtime: tuple[str, str, str]) -> Finding:
    found = [finding for finding in findings if finding.runtimes[0] == runtime]
    assert len(found) == 1, found
    return found[0]


# ------------------------------------------------------------------------------------------
# The demo cluster


@pytest.mark.django_db
def test_the_seed_runtime_excludes_the_pvc_model_only_for_its_pipeline(report: LintReport) -> None:
    finding = only(report.by_code("pipeline-missing-on-model"), PIPELINE_RUNTIME)

    assert finding.severity == "warning"
    assert finding.models == [PVC_MODEL]
    assert "qwen-image-pvc (no recorded pipeline)" in finding.message
    assert finding.details["patches"] == [
        {"model": {"kind": "ClusterBaseModel", "namespace": "", "name": "qwen-image-pvc"}, "patch": SEED_PATCH}
    ]


@pytest.mark.django_db
def test_adding_a_pipeline_to_the_catalog_runtime_would_lose_the_pvc_model(report: LintReport) -> None:
    finding = only(report.by_code("pipeline-would-exclude"), CATALOG_RUNTIME)

    assert finding.severity == "warning"  # OME picks srt-qwen-image for it today
    assert finding.models == [PVC_MODEL]
    assert "(pvc://): qwen-image-pvc; OME picks it today for qwen-image-pvc" in finding.message
    assert finding.details["storage_schemes"] == ["pvc://"]


@pytest.mark.django_db
def test_a_cluster_runtime_that_always_loses_is_shadowed(report: LintReport) -> None:
    finding = only(report.by_code("shadowed"), ("ClusterServingRuntime", "", "vllm-llama-3-3-70b-instruct"))

    assert finding.runtimes[1:] == [
        ("ClusterServingRuntime", "", "srt-deepseek-r1-distill-llama-70b"),
        ("ServingRuntime", "team-a", "team-a-sglang-llama"),
    ]
    assert "namespace ServingRuntimes rank before ClusterServingRuntimes (Q1)" in finding.message
    assert "size tie-break" in finding.message


@pytest.mark.django_db
def test_disabled_and_manual_runtimes_are_not_reported_as_matching_nothing(report: LintReport) -> None:
    flagged = {finding.runtimes[0] for finding in report.by_code("matches-no-model")}

    assert ("ServingRuntime", "team-b", "vllm-llama-legacy") not in flagged
    assert ("ServingRuntime", "team-b", "vllm-qwen3-manual") not in flagged
    assert CATALOG_RUNTIME not in flagged
    assert flagged  # the catalog has runtimes for models the demo does not hold


@pytest.mark.django_db
def test_the_report_is_deterministic_plain_data(demo: Cluster, report: LintReport, django_db_blocker: Any) -> None:
    with django_db_blocker.unblock():
        again = lint_report_get(demo, scope=SYSTEM)

    data = json.loads(json.dumps(report.to_dict()))
    assert data == again.to_dict()
    assert data["counts"]["error"] == 0
    assert sum(data["counts"].values()) == len(data["findings"])
    severities = [finding["severity"] for finding in data["findings"]]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)


# ------------------------------------------------------------------------------------------
# Small manifests


def entry(**fields: Any) -> dict[str, Any]:
    return {
        "modelFormat": {"name": "safetensors", "version": "1.0.0"},
        "modelFramework": {"name": "transformers", "version": "4.51.0"},
        "modelArchitecture": "LlamaForCausalLM",
        "autoSelect": True,
        "priority": 1,
        **fields,
    }


def runtime(name: str, *entries: dict[str, Any], namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "kind": "ServingRuntime" if namespace else "ClusterServingRuntime",
        "metadata": metadata,
        "spec": {"supportedModelFormats": list(entries) if entries else [entry()], **spec},
    }


def lint(*objects: dict[str, Any]) -> LintReport:
    return lint_inventory(inventory_from_objects(objects), cluster_name="test")


def codes(report: LintReport) -> set[str]:
    return {finding.code for finding in report.findings}


def key(name: str, namespace: str = "") -> tuple[str, str, str]:
    return ("ServingRuntime" if namespace else "ClusterServingRuntime", namespace, name)


def test_a_lower_priority_twin_is_shadowed_by_the_higher_score() -> None:
    report = lint(model("llama"), runtime("low"), runtime("high", entry(priority=2)))

    finding = only(report.by_code("shadowed"), key("low"))
    assert finding.runtimes == [key("low"), key("high")]
    assert "higher score (4 vs 2)" in finding.message


def test_a_namespaced_runtime_beats_a_higher_scoring_cluster_runtime() -> None:
    report = lint(
        model("llama"),
        runtime("ns-rt", namespace="team"),
        runtime("cluster-rt", entry(priority=5)),
        {
            "kind": "InferenceService",
            "metadata": {"name": "x", "namespace": "team"},
            "spec": {"model": {"name": "llama"}},
        },
    )

    finding = only(report.by_code("namespace-beats-higher-score"), key("ns-rt", "team"))
    assert finding.runtimes == [key("ns-rt", "team"), key("cluster-rt")]
    assert finding.namespaces == ["team"]
    assert finding.details["rows"][0]["scores"] == [2, 10]


def test_a_score_from_an_entry_that_does_not_match_is_flagged_when_it_decides_the_pick() -> None:
    inflated = runtime("inflated", entry(), entry(modelArchitecture="MistralForCausalLM", priority=9))
    report = lint(model("llama"), inflated, runtime("honest", entry(priority=3)))

    finding = only(report.by_code("score-from-unmatched-entry"), key("inflated"))
    detail = finding.details["rows"][0]
    assert (detail["score"], detail["matching_entries_score"], detail["scoring_entry"]) == (18, 2, 1)
    assert detail["decides_pick"] is True
    assert "without it another runtime would win" in finding.message


def test_auto_selection_through_another_entrys_auto_select_is_flagged() -> None:
    other_entry = entry(modelArchitecture="MistralForCausalLM", autoSelect=True)
    report = lint(model("llama"), runtime("q3", entry(autoSelect=False), other_entry))

    finding = only(report.by_code("auto-selected-via-other-entry"), key("q3"))
    assert finding.details["rows"][0]["matched_entry"] == 0


def test_a_runtime_without_a_size_range_wins_the_size_tie_break() -> None:
    report = lint(
        model("llama", modelParameterSize="8B"),
        runtime("a-ranged", modelSizeRange={"min": "7B", "max": "9B"}),
        runtime("z-open"),
    )

    finding = only(report.by_code("no-range-wins-size-tiebreak"), key("z-open"))
    assert finding.runtimes == [key("z-open"), key("a-ranged")]
    assert finding.details["rows"][0]["range"] == "[7B, 9B]"


def test_bare_number_sizes_that_tie_below_one_make_the_order_undefined() -> None:
    report = lint(
        model("llama", modelParameterSize="8"),
        runtime("a", modelSizeRange={"min": "7", "max": "9"}),
        runtime("b", modelSizeRange={"min": "7.5", "max": "8.9"}),
    )

    finding = report.by_code("size-tiebreak-undefined")[0]
    assert set(finding.runtimes) == {key("a"), key("b")}


def test_negative_weights_that_zero_the_score_are_flagged() -> None:
    negative = entry(
        modelFormat={"name": "safetensors", "version": "1.0.0", "weight": -5},
        modelFramework={"name": "transformers", "version": "4.51.0", "weight": -5},
    )
    report = lint(model("llama"), runtime("negative", negative))

    finding = only(report.by_code("zero-score"), key("negative"))
    assert "entry 0 modelFormat.weight -5" in finding.message
    assert finding.models == [("ClusterBaseModel", "", "llama")]
    assert {"negative-weight"} <= codes(report)


def test_a_runtime_that_matches_nothing_names_its_nearest_miss() -> None:
    report = lint(model("llama"), runtime("old", entry(modelFramework={"name": "transformers", "version": "4.40.0"})))

    finding = only(report.by_code("matches-no-model"), key("old"))
    assert finding.severity == "info"
    assert "framework version mismatch (model=4.51.0, runtime=4.40.0)" in finding.message
    assert finding.details["near_misses"][0]["model"]["name"] == "llama"


def test_a_partial_recorded_pipeline_is_fixable_by_a_patch() -> None:
    diffusion = {
        "modelFormat": {"name": "diffusers", "version": "0.34.0.dev0"},
        "modelFramework": {"name": "diffusers", "version": "0.34.0.dev0"},
        "modelArchitecture": "QwenImagePipeline",
    }
    pipeline_entry = {
        **diffusion,
        "diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}},
        "autoSelect": True,
    }
    partial = model("partial", **diffusion, diffusionPipeline={"className": "QwenImagePipeline"})
    report = lint(partial, runtime("pipe", pipeline_entry), runtime("plain", {**diffusion, "autoSelect": True}))

    finding = only(report.by_code("pipeline-missing-on-model"), key("pipe"))
    assert "recorded pipeline lacks required fields" in finding.message
    assert finding.details["patches"][0]["patch"] == {
        "spec": {"diffusionPipeline": {"transformer": {"library": "diffusers"}}}
    }
    assert report.by_code("pipeline-would-exclude") == []  # the model has a pipeline


def test_an_llm_runtime_gets_no_pipeline_warning() -> None:
    report = lint(model("llama"), runtime("llm"))

    assert "pipeline-would-exclude" not in codes(report)


@pytest.mark.parametrize(
    ("spec", "code", "severity", "text"),
    [
        ({"modelSizeRange": {"min": "7B"}}, "half-open-size-range", "warning", "older OME (v1.2.x) crashes"),
        ({"modelSizeRange": {}}, "empty-size-range", "warning", "admits every size"),
        ({"modelSizeRange": {"min": "9B", "max": "7B"}}, "inverted-size-range", "error", "every model with a size"),
        ({"modelSizeRange": {"min": "1B", "max": "4b"}}, "unparsable-size-bound", "warning", "max '4b' does not parse"),
        ({"supportedModelFormats": []}, "no-supported-formats", "error", "matches no model"),
        (
            {
                "supportedModelFormats": [
                    entry(modelFramework={"name": "transformers", "version": "4.51.0", "operator": "greaterThan"})
                ]
            },
            "unknown-operator",
            "warning",
            'did you mean "GreaterThan"',
        ),
        (
            {"supportedModelFormats": [entry(modelFormat={"name": "safetensors", "version": "V1.0.0"})]},
            "unparsable-version",
            "warning",
            "supportedModelFormats[0].modelFormat.version 'V1.0.0' does not parse",
        ),
        ({"supportedModelFormats": [entry(modelFormat=None)]}, "entry-without-format", "error", "(Q23)"),
        ({"supportedModelFormats": [entry(priority=0)]}, "priority-below-1", "warning", "priority is 0"),
        ({"supportedModelFormats": [entry(diffusionPipeline={})]}, "empty-pipeline-requirement", "info", "(Q10)"),
    ],
)
def test_runtime_checks(spec: dict[str, Any], code: str, severity: str, text: str) -> None:
    report = lint(model("llama", modelParameterSize="8B"), runtime("rt", **spec))

    finding = only(report.by_code(code), key("rt"))
    assert finding.severity == severity
    assert text in finding.message


# ------------------------------------------------------------------------------------------
# `webhook-refuses`: runtimes OME's runtime webhook would refuse as they stand


def test_a_broken_chain_and_an_enabled_profile_are_reported_with_omes_texts() -> None:
    """Texts from ome-docs `concepts/runtimes/runtime-inheritance.md`, "What admission checks":
    the parent was deleted after the child was admitted; a profile lost its disabled: true."""
    child = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ServingRuntime",
        "metadata": {
            "name": "sglang-llama-3-2-3b",
            "namespace": "llama-demo",
            "annotations": {"ome.io/inherit-from": "sglang-profile"},
        },
        "spec": {
            "supportedModelFormats": [
                {"modelFormat": {"name": "safetensors"}, "modelFramework": {"name": "transformers"}}
            ]
        },
    }
    profile = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "other-profile", "annotations": {"ome.io/runtime-profile": "true"}},
        "spec": {
            "supportedModelFormats": [
                {"modelFormat": {"name": "safetensors"}, "modelFramework": {"name": "transformers"}}
            ]
        },
    }

    found = {
        tuple(f.runtimes[0]): f
        for f in lint_inventory(inventory_from_objects([child, profile, model("llama")])).by_code("webhook-refuses")
    }

    assert found[("ServingRuntime", "llama-demo", "sglang-llama-3-2-3b")].details["errors"] == [
        'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'
    ]
    assert found[("ClusterServingRuntime", "", "other-profile")].details["errors"] == [
        'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'
    ]
    assert all(finding.severity == "warning" for finding in found.values())
    old = lint_inventory(inventory_from_objects([child, profile, model("llama")], behaviour="17b77eda"))
    assert old.by_code("webhook-refuses") == []


@pytest.mark.django_db
def test_the_demo_has_no_runtime_omes_webhook_would_refuse(report: LintReport) -> None:
    assert report.by_code("webhook-refuses") == []
