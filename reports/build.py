"""The report objects for a cluster's findings, as a pure function: one `PolicyReport` per
namespace with findings, one `ClusterPolicyReport` for the cluster-scope ones
(`wgpolicyk8s.io/v1alpha2`, docs/reports.md).

Each report is bounded: at most MAX_RESULTS results (failures first, then by resource), each
message at most MAX_MESSAGE characters. What a cap leaves out is counted in the report's
OMITTED_ANNOTATION; `summary` counts the results the report lists.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

REPORT_NAME = "ome-compat"
POLICY = "ome-compat"
SOURCE = "ome-compat"
MANAGED_BY = {"app.kubernetes.io/managed-by": "ome-compat"}
MANAGED_BY_SELECTOR = "app.kubernetes.io/managed-by=ome-compat"
OMITTED_ANNOTATION = "ome-compat.io/results-omitted"
API_VERSION = "wgpolicyk8s.io/v1alpha2"
OME_API_VERSION = "ome.io/v1beta1"
MAX_RESULTS = 500
MAX_MESSAGE = 1024

FAIL = "fail"
WARN = "warn"
CLUSTER_SCOPE = ""


@dataclass(frozen=True)
class Finding:
    """One finding on one object: `rule` (e.g. "has-runtime"), `result` (fail or warn), OME's
    text as `message`, and the objects it is about as (kind, namespace, name) keys. `namespace`
    is the report it goes in ("" for the ClusterPolicyReport)."""

    namespace: str
    rule: str
    result: str
    message: str
    resources: tuple[tuple[str, str, str], ...]
    severity: str = "medium"


def _bounded(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _resource(key: tuple[str, str, str]) -> dict[str, str]:
    kind, namespace, name = key
    found = {"apiVersion": OME_API_VERSION, "kind": kind, "name": name}
    return found | ({"namespace": namespace} if namespace else {})


def _result(finding: Finding) -> dict[str, Any]:
    return {
        "policy": POLICY,
        "rule": finding.rule,
        "result": finding.result,
        "severity": finding.severity,
        "message": _bounded(finding.message),
        "resources": [_resource(key) for key in finding.resources],
        "source": SOURCE,
        "scored": True,
    }


def _order(finding: Finding) -> tuple[object, ...]:
    return (finding.result != FAIL, finding.resources, finding.rule, finding.message)


def report_for(namespace: str, findings: Iterable[Finding]) -> dict[str, Any]:
    """The report of one namespace ("": the ClusterPolicyReport), from its findings."""
    ordered = sorted(set(findings), key=_order)
    listed = [_result(finding) for finding in ordered[:MAX_RESULTS]]
    metadata: dict[str, Any] = {"name": REPORT_NAME, "labels": dict(MANAGED_BY)}
    if namespace != CLUSTER_SCOPE:
        metadata["namespace"] = namespace
    if len(ordered) > MAX_RESULTS:
        metadata["annotations"] = {OMITTED_ANNOTATION: str(len(ordered) - MAX_RESULTS)}
    summary = {outcome: sum(1 for result in listed if result["result"] == outcome) for outcome in (FAIL, WARN)}
    return {
        "apiVersion": API_VERSION,
        "kind": "PolicyReport" if namespace != CLUSTER_SCOPE else "ClusterPolicyReport",
        "metadata": metadata,
        "summary": {"pass": 0, "skip": 0, "error": 0, **summary},
        "results": listed,
    }


def reports_build(findings: Iterable[Finding]) -> dict[tuple[str, str], dict[str, Any]]:
    """Every report the findings make, keyed by (kind, namespace); a namespace without
    findings has none."""
    by_namespace: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_namespace[finding.namespace].append(finding)
    reports = (report_for(namespace, found) for namespace, found in by_namespace.items())
    return {(report["kind"], report["metadata"].get("namespace", "")): report for report in reports}
