"""The reports' findings are the dashboard's: each model the matrix counts without a runtime
(no match, manual-only, invalid) once where it lives, each InferenceService OME silently
ignores, and each failure of a failing policy assertion, with OME's own texts."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from django.conf import settings

from access.scope import SYSTEM
from inventory.models import Cluster
from inventory.sync import event_apply
from matrix.counts import ACROSS, model_counts
from matrix.selectors import current_build, rows_visible
from policies.evaluation import policies_evaluate
from policies.services import policies_load_files
from reports.build import reports_build
from reports.findings import cluster_findings
from tests.isvcs.test_isvcs import stored


@pytest.mark.django_db
def test_each_model_without_a_runtime_is_one_finding_where_it_lives(demo: Cluster) -> None:
    counts = model_counts(rows_visible(SYSTEM).filter(build=current_build(demo)), ACROSS)

    found = [f for f in cluster_findings(demo) if f.rule in ("has-runtime", "auto-selectable-runtime", "valid-model")]

    by_rule = {rule: sum(1 for f in found if f.rule == rule) for rule in ("has-runtime", "auto-selectable-runtime")}
    assert by_rule == {"has-runtime": counts.no_match, "auto-selectable-runtime": counts.manual_only}
    assert sum(1 for f in found if f.rule == "valid-model") == counts.invalid
    assert len({f.resources for f in found}) == len(found)
    gemma = [f for f in found if f.resources[0][2] == "gemma-2b"]
    assert [(f.namespace, f.rule, f.result) for f in gemma] == [("", "has-runtime", "fail")]
    assert gemma[0].message.startswith("no runtime found to support model")


@pytest.mark.django_db
def test_a_silently_ignored_service_is_a_failure_in_its_namespace_with_what_ome_does(demo: Cluster) -> None:
    obj = copy.deepcopy(stored(demo, "InferenceService", "team-b", "qwen3-moe-fp8"))
    obj["metadata"].update({"name": "wrong-kind", "uid": "uid-wrong-kind"})
    obj["spec"]["model"]["kind"] = "ClusterBaseModel"
    event_apply(demo, "ADDED", obj)

    (silent,) = [f for f in cluster_findings(demo) if f.rule == "not-silently-ignored"]

    assert (silent.namespace, silent.result, silent.resources) == (
        "team-b", "fail", (("InferenceService", "team-b", "wrong-kind"),),
    )  # fmt: skip
    assert silent.message.endswith("Failed to get referenced ClusterBaseModel")


@pytest.mark.django_db
def test_a_failing_assertion_is_a_result_per_failure_naming_policy_and_assertion(demo: Cluster) -> None:
    policies_load_files([Path(settings.BASE_DIR) / "demo/policies"])
    policies_evaluate(demo)

    (failed,) = [f for f in cluster_findings(demo) if f.rule.startswith("assert-")]

    assert failed.rule == "assert-research-diffusion-qwen-image-pvc-on-pipeline-runtime"
    assert (failed.result, failed.severity) == ("fail", "high")
    assert ("ClusterBaseModel", "", "qwen-image-pvc") in failed.resources
    report = reports_build([failed])
    # The failure is about the model's pick in the namespace `research`: that namespace's report.
    assert list(report) == [("PolicyReport", "research")]
    assert failed.message.startswith("ClusterBaseModel qwen-image-pvc in research: OME picks")
