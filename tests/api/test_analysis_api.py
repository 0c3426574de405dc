"""The analysis endpoints: what-if, runtime lint, InferenceService verdicts."""

from __future__ import annotations

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient

from inventory.models import Cluster

pytestmark = pytest.mark.django_db

SEED_MODEL_PATCHED = """
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata: {name: qwen-image-pvc}
spec:
  modelFormat: {name: diffusers, version: "0.34.0.dev0"}
  modelFramework: {name: diffusers, version: "0.34.0.dev0"}
  modelArchitecture: QwenImagePipeline
  diffusionPipeline: {className: QwenImagePipeline, transformer: {library: diffusers}}
  storage: {storageUri: "pvc://research:qwen-image-models/Qwen-Image"}
"""


def test_whatif_shows_the_pick_moving_to_the_pipeline_runtime(demo: Cluster, api: APIClient) -> None:
    response = api.post("/api/v1/matrix/whatif/", {"manifests": SEED_MODEL_PATCHED}, format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["ome"]["profile"] == "v1.3"  # the demo cluster is judged by the newest OME
    picks = {(row["namespace"], row["new_selected"]["name"]) for row in body["rows"] if row["pick_changed"]}
    assert ("_cluster", "srt-qwen-image-pipeline") in picks


def test_whatif_names_the_bad_document_and_field(demo: Cluster, api: APIClient) -> None:
    bad = SEED_MODEL_PATCHED.replace('version: "0.34.0.dev0"}\n  modelFramework', "version: 0.34}\n  modelFramework")

    response = api.post("/api/v1/matrix/whatif/", {"manifests": bad}, format="json")

    assert response.status_code == 400
    body = response.json()
    assert body["field"] == "spec.modelFormat.version"
    assert "document 1" in body["detail"]


def test_whatif_changes_nothing(demo: Cluster, api: APIClient) -> None:
    api.post("/api/v1/matrix/whatif/", {"manifests": SEED_MODEL_PATCHED}, format="json")

    selection = api.get("/api/v1/models/", {"name": "qwen-image-pvc"}).json()
    assert selection["results"][0]["has_pipeline"] is False


def test_lint_reports_the_pipeline_risk_of_the_seed_page(demo: Cluster, api: APIClient) -> None:
    response = api.get("/api/v1/matrix/lint/")

    assert response.status_code == 200
    findings = response.json()["findings"]
    assert any("qwen-image-pvc" in str(finding) and "pipeline" in finding["message"] for finding in findings)


def test_isvc_verdicts_list_every_inference_service_with_oMEs_error(demo: Cluster, api: APIClient) -> None:
    response = api.get("/api/v1/inference-services/verdicts/", {"cluster": "demo"})

    assert response.status_code == 200
    results = response.json()["results"]
    assert len(results) == 10
    assert any(result["error"] and "no runtime found" in result["error"] for result in results)


def test_analysis_reads_follow_the_anonymous_read_setting(demo: Cluster, api: APIClient, settings: Settings) -> None:
    settings.API_ANONYMOUS_READ = False

    assert api.get("/api/v1/matrix/lint/").status_code in (401, 403)
    assert api.post("/api/v1/matrix/whatif/", {"manifests": ""}, format="json").status_code in (401, 403)
