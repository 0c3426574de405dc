"""A policy scope that selects models by what they are (issue 33, item 4): "every diffusion
model has an auto-selected runtime" in the dashboard, its API and its Policies page, covering a
diffusion model added later. The demo's diffusion models are those whose manifest says
`modelFormat: {name: diffusers}` (the format OME's model agent records for a diffusers
pipeline: ome-docs concepts/models/base-models.md), counted here from the files."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from django.conf import settings as django_settings
from django.test import Client
from rest_framework.test import APIClient

from inventory.models import Cluster
from inventory.sync import event_apply
from policies.evaluation import policies_evaluate
from policies.services import policies_load_files
from tests.support.policies import DIFFUSION_POLICY as POLICY

ROOT = Path(django_settings.BASE_DIR)
ASSERTION = "diffusion/every-diffusion-model-has-a-runtime"


def diffusion_models() -> list[str]:
    found = []
    for path in sorted((ROOT / "demo").rglob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            spec = (document or {}).get("spec") or {}
            if (
                document.get("kind") == "ClusterBaseModel"
                and (spec.get("modelFormat") or {}).get("name") == "diffusers"
            ):
                found.append(document["metadata"]["name"])
    return found


def load(tmp_path: Path) -> None:
    path = tmp_path / "diffusion.yaml"
    path.write_text(POLICY)
    policies_load_files([path])


def add_unserved_diffusion_model(cluster: Cluster) -> None:
    model = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": "new-diffusion-model", "resourceVersion": "1"},
        "spec": {
            "modelFormat": {"name": "diffusers", "version": "0.35.0", "weight": 1, "operator": "Equal"},
            "modelArchitecture": "NoSuchPipeline",
            "storage": {"storageUri": "hf://example/new-diffusion-model"},
        },
    }
    assert event_apply(cluster, "ADDED", model) is not None


def states(cluster: Cluster) -> dict[str, dict[str, object]]:
    body = APIClient().get("/api/v1/policies/states/", {"cluster": cluster.name}).json()
    return {item["id"]: item for item in body["results"]}


@pytest.mark.django_db
def test_the_diffusion_policy_checks_every_diffusion_model_and_passes_on_the_demo(
    demo: Cluster, tmp_path: Path
) -> None:
    load(tmp_path)
    policies_evaluate(demo)

    state = states(demo)[ASSERTION]
    assert state["state"] == "passing"
    assert len(diffusion_models()) == 4  # a ClusterBaseModel: one row in cluster scope and one per namespace (3)
    assert state["checked"] == 4 * len(diffusion_models())


@pytest.mark.django_db
def test_a_diffusion_model_added_later_without_a_runtime_fails_it_on_the_api_and_the_page(
    demo: Cluster, tmp_path: Path, client: Client
) -> None:
    load(tmp_path)
    add_unserved_diffusion_model(demo)
    policies_evaluate(demo)

    state = states(demo)[ASSERTION]
    assert state["state"] == "failing"
    assert {failure["subject"] for failure in state["failures"]} >= {
        "ClusterBaseModel new-diffusion-model in cluster scope"
    }
    assert all("new-diffusion-model" in failure["subject"] for failure in state["failures"])
    html = client.get("/policies/", {"cluster": demo.name}).content.decode()
    assert 'id="assertion-diffusion-every-diffusion-model-has-a-runtime" class="assertion failing"' in html
    assert "new-diffusion-model" in html


@pytest.mark.django_db
def test_the_check_api_takes_the_same_selector(demo: Cluster) -> None:
    body = {"cluster": "demo", "manifests": "", "policies": POLICY}

    answer = APIClient().post("/api/v1/policies/check/", body, format="json")

    assert answer.status_code == 200, answer.content
    (assertion,) = answer.json()["sections"][0]["assertions"]
    assert (assertion["passed"], assertion["checked"]) == (True, 4 * len(diffusion_models()))
