"""The report objects, as a pure function of the findings: one report per namespace, the
cluster-scope findings in the ClusterPolicyReport, bounded in results and in message length,
and admitted by the vendored CRD's schema."""

from __future__ import annotations

import pytest

from reports.build import MAX_MESSAGE, MAX_RESULTS, OMITTED_ANNOTATION, Finding, report_for, reports_build
from tests.fakes.kube_api import REPORT_KINDS, KubeError, crd_check


def finding(name: str, *, namespace: str = "team-a", result: str = "fail", message: str = "no runtime") -> Finding:
    kind = "BaseModel" if namespace else "ClusterBaseModel"
    return Finding(namespace, "has-runtime", result, message, ((kind, namespace, name),))


def admitted(report: dict) -> bool:
    try:
        crd_check(REPORT_KINDS[report["kind"].lower() + "s"], report)
    except KubeError:
        return False
    return True


def test_findings_make_one_report_per_namespace_and_one_for_the_cluster() -> None:
    reports = reports_build([finding("a"), finding("b", namespace="team-b"), finding("c", namespace="")])

    assert set(reports) == {("PolicyReport", "team-a"), ("PolicyReport", "team-b"), ("ClusterPolicyReport", "")}
    cluster = reports[("ClusterPolicyReport", "")]
    assert "namespace" not in cluster["metadata"]
    assert cluster["results"][0]["resources"] == [
        {"apiVersion": "ome.io/v1beta1", "kind": "ClusterBaseModel", "name": "c"}
    ]
    team_a = reports[("PolicyReport", "team-a")]
    assert team_a["metadata"] == {
        "name": "ome-compat",
        "namespace": "team-a",
        "labels": {"app.kubernetes.io/managed-by": "ome-compat"},
    }
    (result,) = team_a["results"]
    assert (result["policy"], result["rule"], result["result"], result["source"]) == (
        "ome-compat", "has-runtime", "fail", "ome-compat",
    )  # fmt: skip
    assert all(admitted(report) for report in reports.values())


def test_no_findings_make_no_report() -> None:
    assert reports_build([]) == {}


def test_failures_come_first_and_the_summary_counts_each_result() -> None:
    report = report_for("team-a", [finding("z"), finding("a", result="warn"), finding("m")])

    assert [(r["result"], r["resources"][0]["name"]) for r in report["results"]] == [
        ("fail", "m"), ("fail", "z"), ("warn", "a"),
    ]  # fmt: skip
    assert report["summary"] == {"pass": 0, "skip": 0, "error": 0, "fail": 2, "warn": 1}


def test_a_report_keeps_at_most_max_results_and_says_how_many_it_left_out() -> None:
    report = report_for("team-a", [finding(f"m-{index:04d}") for index in range(MAX_RESULTS + 7)])

    assert len(report["results"]) == MAX_RESULTS
    assert report["metadata"]["annotations"] == {OMITTED_ANNOTATION: "7"}
    assert report["summary"]["fail"] == MAX_RESULTS
    assert admitted(report)


def test_a_long_message_is_cut_to_max_message_characters() -> None:
    (result,) = report_for("team-a", [finding("a", message="x" * (MAX_MESSAGE * 3))])["results"]

    assert len(result["message"]) == MAX_MESSAGE
    assert result["message"].endswith("…")


@pytest.mark.parametrize("field", ["result", "severity"])
def test_the_crd_schema_refuses_a_value_outside_its_enum(field: str) -> None:
    report = report_for("team-a", [finding("a")])
    report["results"][0][field] = "catastrophic"

    assert not admitted(report)
