"""A registered live cluster (the fake API server, through the real client) with reports on
holds PolicyReports that match the dashboard's findings, and they follow a change: the write
runs in a Celery worker after each matrix update. Objects without our label (or with another
name) are never touched; a cluster that did not opt in gets none."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from inventory.live.resync import cluster_resync
from inventory.models import Cluster
from matrix.selectors import matrix_version
from matrix.services import matrix_rebuild
from reports.services import reports_write
from reports.tasks import reports_write_task
from tests.fakes.kube_api import FakeKubeAPI
from tests.support.celery_worker import running_worker
from tests.support.manifests import llama_model

OURS = {"app.kubernetes.io/managed-by": "ome-compat"}


def runtime(name: str, *, architecture: str, auto_select: bool, namespace: str | None = None) -> dict[str, Any]:
    entry = {
        "modelFormat": {"name": "safetensors", "version": "1.0.0"},
        "modelFramework": {"name": "transformers", "version": "4.51.0"},
        "modelArchitecture": architecture,
        "autoSelect": auto_select,
    }
    metadata: dict[str, Any] = {"name": name} | ({"namespace": namespace} if namespace else {})
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ServingRuntime" if namespace else "ClusterServingRuntime",
        "metadata": metadata,
        "spec": {"supportedModelFormats": [entry], "containers": [{"name": "engine", "image": "sglang:1"}]},
    }


LLAMA_RUNTIME = runtime("sglang-llama", architecture="LlamaForCausalLM", auto_select=True)
INVENTORY = [
    llama_model("llama-8b"),  # cluster scope, no runtime until LLAMA_RUNTIME
    llama_model("llama-team", namespace="team-a"),  # no runtime until LLAMA_RUNTIME
    llama_model("mistral", namespace="team-b", modelArchitecture="MistralForCausalLM"),  # manual-only
    runtime("srt-mistral", architecture="MistralForCausalLM", auto_select=False, namespace="team-b"),
]


@pytest.fixture
def fake() -> Iterator[FakeKubeAPI]:
    with FakeKubeAPI() as api:
        for obj in INVENTORY:
            api.create({"apiVersion": "ome.io/v1beta1", **copy.deepcopy(obj)})
        yield api


def live_cluster(fake: FakeKubeAPI, tmp_path: Path, *, reports: bool) -> Cluster:
    path = fake.write_kubeconfig(tmp_path / "live.kubeconfig")
    cluster = Cluster.objects.create(
        name="live", source=Cluster.Source.KUBECONFIG, kubeconfig=str(path), policy_reports=reports
    )
    cluster_resync(cluster)
    matrix_rebuild(cluster)
    return cluster


def findings(fake: FakeKubeAPI) -> set[tuple[str, str, str, str]]:
    """(report namespace, rule, result, model) of every result in the cluster's reports."""
    found = set()
    for kind in ("PolicyReport", "ClusterPolicyReport"):
        for report in fake.objects(kind):
            namespace = report["metadata"].get("namespace", "")
            for result in report.get("results") or []:
                found |= {(namespace, result["rule"], result["result"], r["name"]) for r in result["resources"]}
    return found


BEFORE = {
    ("", "has-runtime", "fail", "llama-8b"),
    ("team-a", "has-runtime", "fail", "llama-team"),
    ("team-b", "auto-selectable-runtime", "warn", "mistral"),
}
AFTER = {("team-b", "auto-selectable-runtime", "warn", "mistral")}


@pytest.mark.django_db
def test_the_reports_hold_the_dashboards_findings_with_omes_text(
    fake: FakeKubeAPI, tmp_path: Path, settings: Any
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    cluster = live_cluster(fake, tmp_path, reports=True)

    outcome = reports_write(cluster)

    assert findings(fake) == BEFORE
    assert sorted(outcome.created) == [
        "ClusterPolicyReport ome-compat", "PolicyReport team-a/ome-compat", "PolicyReport team-b/ome-compat",
    ]  # fmt: skip
    (team_a,) = fake.objects("PolicyReport", "team-a")
    assert team_a["metadata"]["labels"] == OURS
    assert team_a["summary"]["fail"] == 1
    message = team_a["results"][0]["message"]
    assert message.startswith("no runtime found to support model safetensors")
    (team_b,) = fake.objects("PolicyReport", "team-b")
    assert "srt-mistral" in team_b["results"][0]["message"]
    assert reports_write(cluster).unchanged == outcome.created  # nothing changed: nothing written


@pytest.mark.django_db
def test_objects_without_our_label_or_name_are_never_touched(fake: FakeKubeAPI, tmp_path: Path, settings: Any) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    theirs = fake.create(
        {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport",
         "metadata": {"name": "ome-compat", "namespace": "team-a", "labels": {"owner": "kyverno"}}, "results": []}
    )  # fmt: skip
    labelled_other_name = fake.create(
        {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "ClusterPolicyReport",
         "metadata": {"name": "something-else", "labels": OURS}, "results": []}
    )  # fmt: skip
    cluster = live_cluster(fake, tmp_path, reports=True)

    outcome = reports_write(cluster)
    fake.apply(copy.deepcopy(LLAMA_RUNTIME))
    cluster_resync(cluster)
    matrix_rebuild(cluster)
    later = reports_write(cluster)

    assert fake.get("PolicyReport", "ome-compat", "team-a") == theirs
    assert fake.get("ClusterPolicyReport", "something-else") == labelled_other_name
    assert [text.split(":")[0] for text in outcome.refused] == ["PolicyReport team-a/ome-compat"]
    assert later.deleted == ["ClusterPolicyReport ome-compat"]


@pytest.mark.django_db
def test_a_cluster_that_did_not_opt_in_gets_no_report(fake: FakeKubeAPI, tmp_path: Path, settings: Any) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    cluster = live_cluster(fake, tmp_path, reports=False)
    fake.clear_requests()

    outcome = reports_write(cluster)

    assert outcome.to_dict() == {"created": [], "replaced": [], "deleted": [], "unchanged": [], "refused": []}
    assert fake.objects("PolicyReport") == fake.objects("ClusterPolicyReport") == []
    assert fake.requests == []


@pytest.mark.integration
def test_the_reports_follow_a_runtime_added_and_removed_through_the_worker(
    transactional_db: None, fake: FakeKubeAPI, tmp_path: Path, settings: Any, celery_app: Celery
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    cluster = live_cluster(fake, tmp_path, reports=True)
    reports_write(cluster)
    assert findings(fake) == BEFORE
    settings.MATRIX_UPDATE_ON_CHANGE, settings.MATRIX_UPDATE_DELAY = True, 0

    with running_worker(celery_app):
        fake.apply(copy.deepcopy(LLAMA_RUNTIME))
        cluster_resync(cluster)  # stores the new runtime: a matrix update, then the reports, in the worker
        assert fake.wait_for(lambda: findings(fake) == AFTER, timeout=30), findings(fake)
        assert fake.objects("PolicyReport", "team-a") == []  # no more findings: the report is deleted

        fake.delete("ClusterServingRuntime", "sglang-llama")
        cluster_resync(cluster)
        assert fake.wait_for(lambda: findings(fake) == BEFORE, timeout=30), findings(fake)


@pytest.mark.integration
def test_an_opted_out_cluster_is_never_written_after_its_matrix_updates(
    transactional_db: None, fake: FakeKubeAPI, tmp_path: Path, settings: Any, celery_app: Celery
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    cluster = live_cluster(fake, tmp_path, reports=False)
    settings.MATRIX_UPDATE_ON_CHANGE, settings.MATRIX_UPDATE_DELAY = True, 0
    version = matrix_version(cluster)

    with running_worker(celery_app):
        fake.apply(copy.deepcopy(LLAMA_RUNTIME))
        cluster_resync(cluster)
        assert fake.wait_for(lambda: matrix_version(cluster) != version, timeout=30)

    assert not [request for request in fake.requests if "wgpolicyk8s.io" in request.path]
    assert fake.objects("PolicyReport") == fake.objects("ClusterPolicyReport") == []


@pytest.mark.django_db
def test_a_cluster_without_the_report_crds_is_told_so_and_nothing_is_written(
    fake: FakeKubeAPI, tmp_path: Path, settings: Any
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    cluster = live_cluster(fake, tmp_path, reports=True)
    fake.remove_kind("PolicyReport")

    assert reports_write_task(cluster.pk) == {
        "error": "the Policy Report CRD policyreports.wgpolicyk8s.io is not installed (404)"
    }
    assert fake.objects("ClusterPolicyReport") == []
