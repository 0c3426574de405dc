"""Will OME silently ignore it? The dashboard's surfaces of `matching.ome_ignores` (the stored
reason, the API filter, the metric state) and the services waiting for a re-apply after a model
change, with the kubectl command that makes OME decide again, run for real against the fake API
server.

OME does not watch models: "after you fix a model, change the InferenceService's spec, labels or
annotations" (ome-docs `guides/deploy-models/troubleshoot-runtime-selection.md`, Step 5), and
"Since v1.3, OME tries again for an existing InferenceService when you create or change a
ServingRuntime" (same step): a runtime change leaves no service waiting.
"""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import generate_latest
from rest_framework.test import APIClient

from access.scope import SYSTEM
from inventory.live.resync import cluster_resync
from inventory.models import Cluster, Resource
from inventory.sync import event_apply
from isvcs.models import InferenceServiceVerdict
from isvcs.reapply import RECONCILE_ANNOTATION, reapply_command
from isvcs.services import isvc_verdicts, isvc_verdicts_refresh
from ome_dashboard.ops.metrics import registry_for
from tests.fakes.kube_api import FakeKubeAPI
from tests.support.manifests import llama_model

from .test_isvcs import by_name, patch_pvc_pipeline, stored

URL = "/api/v1/inference-services/verdicts/"
H100 = "nvidia-h100"


def add_service(demo: Cluster, name: str, **changes: Any) -> None:
    """A copy of team-b/qwen3-moe-fp8 (a BaseModel, auto-selected) with `changes` to its spec."""
    obj = stored(demo, "InferenceService", "team-b", "qwen3-moe-fp8")
    obj["metadata"].update({"name": name, "uid": f"uid-{name}"})
    obj["spec"].update(changes)
    event_apply(demo, "ADDED", obj)


@pytest.fixture
def ignored(demo: Cluster) -> Cluster:
    """The demo with a service whose kind is wrong and one whose named runtime drops its class."""
    model = copy.deepcopy(stored(demo, "InferenceService", "team-b", "qwen3-moe-fp8")["spec"]["model"])
    add_service(demo, "wrong-kind", model={**model, "kind": "ClusterBaseModel"})
    add_service(demo, "class-dropped", runtime={"name": "srt-qwen3-8b"}, acceleratorSelector={"acceleratorClass": H100})
    isvc_verdicts_refresh(demo)
    return demo


@pytest.mark.django_db
def test_each_ignored_service_is_stored_with_its_reason(ignored: Cluster) -> None:
    records = InferenceServiceVerdict.objects.filter(cluster=ignored).exclude(current_ignored="")

    assert {(r.name, r.current_ignored) for r in records} == {
        ("wrong-kind", "wrong-kind"),
        ("class-dropped", "accelerator-dropped"),
    }


@pytest.mark.django_db
def test_the_api_filter_keeps_the_ignored_services_each_with_why_and_its_fix(ignored: Cluster) -> None:
    body = APIClient().get(URL, {"cluster": "demo", "ignored": "true"}).json()

    results = {f"{r['namespace']}/{r['name']}": r for r in body["results"]}
    assert set(results) == {"team-b/wrong-kind", "team-b/class-dropped"}
    wrong = results["team-b/wrong-kind"]
    assert (wrong["verdict"], wrong["event"]) == ("silent", None)
    assert wrong["ignored"]["reason"] == "wrong-kind"
    assert wrong["ignored"]["text"].endswith("Failed to get referenced ClusterBaseModel")
    assert wrong["ignored"]["fix"] == "set spec.model.kind: BaseModel"
    dropped = results["team-b/class-dropped"]["ignored"]
    assert dropped["reason"] == "accelerator-dropped"
    assert dropped["fix"] == (
        "add nvidia-h100 to spec.acceleratorRequirements.acceleratorClasses of ClusterServingRuntime srt-qwen3-8b"
    )
    everything = APIClient().get(URL, {"cluster": "demo"}).json()["results"]
    assert len(everything) > len(results)
    assert all(r["ignored"] is None for r in everything if r["name"] not in ("wrong-kind", "class-dropped"))


@pytest.mark.django_db
def test_a_filter_value_that_is_not_a_boolean_is_refused_naming_the_field(demo: Cluster) -> None:
    response = APIClient().get(URL, {"cluster": "demo", "ignored": "perhaps"})

    assert response.status_code == 400
    assert "ignored" in response.content.decode()


@pytest.mark.django_db
def test_the_metric_counts_ignored_services_in_the_state_silent(ignored: Cluster) -> None:
    text = generate_latest(registry_for(SYSTEM)).decode()

    assert 'ome_inferenceservices{cluster="demo",state="silent"} 2.0' in text


# --- waiting for a re-apply ------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_service_whose_model_changed_since_ome_decided_waits_for_a_re_apply(demo: Cluster) -> None:
    isvc_verdicts_refresh(demo)
    patch_pvc_pipeline(demo)  # the model changes: OME would now pick another runtime for research/qwen-image

    verdicts = by_name(isvc_verdicts(demo, scope=SYSTEM))

    assert verdicts["research/qwen-image"].reapply == reapply_command("research", "qwen-image")
    assert [name for name, v in verdicts.items() if v.reapply] == ["research/qwen-image"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
@pytest.mark.django_db
def test_the_re_apply_command_makes_ome_decide_again_against_a_real_api_server(tmp_path: Path, settings: Any) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    model = llama_model("llama-8b")
    fixed_format = model["spec"].pop("modelFormat")  # no format: OME refuses the model until it has one
    service = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "chat", "namespace": "team", "uid": "uid-chat"},
        "spec": {"model": {"name": "llama-8b"}, "engine": {"minReplicas": 1}},
    }
    runtime = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "rt"},
        "spec": {
            "supportedModelFormats": [
                {
                    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
                    "modelFramework": {"name": "transformers", "version": "4.51.0"},
                    "modelArchitecture": "LlamaForCausalLM",
                    "autoSelect": True,
                }
            ]
        },
    }
    with FakeKubeAPI() as fake:
        for obj in (copy.deepcopy(model), runtime, service):
            fake.apply(copy.deepcopy(obj))
        kubeconfig = fake.write_kubeconfig(tmp_path / "kubeconfig")
        cluster = Cluster.objects.create(name="live", source=Cluster.Source.KUBECONFIG, kubeconfig=str(kubeconfig))
        cluster_resync(cluster)
        (first,) = isvc_verdicts_refresh(cluster)
        assert (first.verdict, first.failure) == ("blocked", "model-invalid")

        model["spec"]["modelFormat"] = fixed_format  # the fix, to the model only
        fake.apply(copy.deepcopy(model))
        cluster_resync(cluster)
        (waiting,) = isvc_verdicts(cluster, scope=SYSTEM)
        assert waiting.verdict == "selected"
        assert waiting.reapply == reapply_command("team", "chat")

        done = subprocess.run(
            ["bash", "-c", f"{waiting.reapply} --kubeconfig {kubeconfig}"], capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr
        live = fake.get("InferenceService", "chat", "team")
        assert live is not None
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", live["metadata"]["annotations"][RECONCILE_ANNOTATION])
        assert live["spec"] == service["spec"]

        cluster_resync(cluster)
        (decided,) = isvc_verdicts_refresh(cluster)
        assert decided.first is not None
        assert (decided.first.verdict, decided.reapply) == ("selected", None)  # OME decided again
        assert Resource.objects.filter(cluster=cluster, kind="InferenceService").count() == 1
