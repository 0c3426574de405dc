"""The dashboard's ClusterRole (chart, deploy/ and the remote cluster's access) may list,
create, update and delete Policy Reports, and nothing more on them."""

from __future__ import annotations

from typing import Any

from tests.ops.test_chart import helm_template, kustomize

REPORTS_RULE = {
    "apiGroups": ["wgpolicyk8s.io"],
    "resources": ["policyreports", "clusterpolicyreports"],
    "verbs": ["list", "create", "update", "delete"],
}


def report_rules(docs: Any) -> list[dict[str, Any]]:
    return [
        rule
        for doc in docs
        if doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == "ome-compat"
        for rule in doc.get("rules") or []
        if "wgpolicyk8s.io" in rule["apiGroups"]
    ]


def test_every_shape_of_the_dashboard_s_role_may_write_policy_reports() -> None:
    assert report_rules(helm_template([])) == [REPORTS_RULE]
    assert report_rules(kustomize("deploy")) == [REPORTS_RULE]
    assert report_rules(kustomize("deploy/remote-cluster")) == [REPORTS_RULE]
