"""The warn-only admission webhook (docs/admission.md) over the demo cluster: AdmissionReview v1
requests as the API server sends them (the shape of kubernetes.io "Dynamic Admission Control",
"Request" and "Response": uid, kind, resource, requestKind, namespace, operation, userInfo,
object, oldObject, dryRun, options), for create, update and delete; a malformed body; a
namespace the dashboard holds nothing of; a namespace the caller's token may not read."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from pytest_django import Settings
from rest_framework.test import APIClient

import matching
from access.scope import SYSTEM
from access.tokens import api_token_create
from inventory.models import Cluster, Resource
from tests.support.access import grant
from whatif.check import check_cluster
from whatif.errors import WhatIfError
from whatif.services import whatif

URL = "/api/v1/admission/demo/"
PROFILE_TEXT = 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'
PLURALS = {
    "ServingRuntime": "servingruntimes",
    "ClusterServingRuntime": "clusterservingruntimes",
    "BaseModel": "basemodels",
    "ClusterBaseModel": "clusterbasemodels",
}


def stored(demo: Cluster, kind: str, name: str, namespace: str = "") -> dict[str, Any]:
    return copy.deepcopy(Resource.objects.get(cluster=demo, kind=kind, namespace=namespace, name=name).obj)


def review(operation: str, obj: dict[str, Any] | None, old: dict[str, Any] | None = None) -> dict[str, Any]:
    """An AdmissionReview v1 request for `obj` (the new object; None for a delete)."""
    subject = obj or old
    assert subject is not None
    kind = {"group": "ome.io", "version": "v1beta1", "kind": subject["kind"]}
    namespace = subject["metadata"].get("namespace")
    request: dict[str, Any] = {
        "uid": str(uuid.uuid4()),
        "kind": kind,
        "resource": {"group": "ome.io", "version": "v1beta1", "resource": PLURALS[subject["kind"]]},
        "requestKind": kind,
        "requestResource": {"group": "ome.io", "version": "v1beta1", "resource": PLURALS[subject["kind"]]},
        "name": subject["metadata"]["name"],
        "operation": operation,
        "userInfo": {"username": "jane", "groups": ["system:authenticated"]},
        "object": obj,
        "oldObject": old,
        "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": f"{operation.title()}Options"},
    }
    if namespace:
        request["namespace"] = namespace
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


@pytest.fixture
def webhook(db: None, settings: Settings) -> APIClient:
    """The API server's client: a viewer's token as `Authorization: Bearer` (a kubeconfig's token)."""
    settings.API_ANONYMOUS_READ = False
    user = User.objects.create_user("kube-apiserver")
    grant(user, "viewer")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user, name='webhook')[1]}")
    return client


def answer(client: APIClient, body: dict[str, Any]) -> list[str]:
    response = client.post(URL, body, format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["apiVersion"] == "admission.k8s.io/v1"
    assert data["kind"] == "AdmissionReview"
    assert data["response"]["uid"] == body["request"]["uid"]
    assert data["response"]["allowed"] is True
    return list(data["response"].get("warnings", []))


@pytest.mark.django_db
def test_an_update_that_moves_a_service_says_where(demo: Cluster, webhook: APIClient) -> None:
    """The seed patch gives qwen-image-pvc its pipeline: research/qwen-image (auto-selected)
    moves to srt-qwen-image-pipeline (the what-if's pick, tests/whatif/test_whatif.py)."""
    old = stored(demo, "ClusterBaseModel", "qwen-image-pvc")
    new = copy.deepcopy(old)
    new["spec"]["diffusionPipeline"] = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}

    warnings = answer(webhook, review("UPDATE", new, old))

    assert "OME Compat: moves 1 InferenceService to srt-qwen-image-pipeline on their next reconcile" in warnings


@pytest.mark.django_db
def test_a_delete_that_leaves_a_model_without_a_runtime_says_so(demo: Cluster, webhook: APIClient) -> None:
    old = stored(demo, "ClusterServingRuntime", "srt-qwen-image")

    warnings = answer(webhook, review("DELETE", None, old))

    assert "OME Compat: leaves 1 InferenceService without a runtime on their next reconcile" in warnings
    lost = next(warning for warning in warnings if "only runtime" in warning)
    assert lost.startswith("OME Compat: 1 model loses its only runtime: ")
    assert "ClusterBaseModel qwen-image-pvc" in lost


@pytest.mark.django_db
def test_a_create_carries_omes_own_refusal_as_a_warning(demo: Cluster, webhook: APIClient) -> None:
    """A runtime marked as a profile but enabled: OME's webhook refuses it (ome-docs
    runtime-inheritance.md, "What admission checks"); this webhook still allows, and warns."""
    new = stored(demo, "ClusterServingRuntime", "srt-qwen-image")
    new["metadata"] = {"name": "srt-qwen-image-v2", "annotations": {"ome.io/runtime-profile": "true"}}
    for entry in new["spec"]["supportedModelFormats"]:
        entry["priority"] = entry.get("priority", 1) + 5

    warnings = answer(webhook, review("CREATE", new))

    assert f"OME Compat: OME's runtime webhook refuses this: {PROFILE_TEXT}" in warnings
    assert any(warning.startswith("OME Compat: moves ") and "to srt-qwen-image-v2 " in warning for warning in warnings)


@pytest.mark.django_db
def test_a_change_that_moves_nothing_gets_no_warning(demo: Cluster, webhook: APIClient) -> None:
    old = stored(demo, "ClusterServingRuntime", "srt-qwen-image")
    new = copy.deepcopy(old)
    new["metadata"].setdefault("labels", {})["team"] = "platform"

    assert answer(webhook, review("UPDATE", new, old)) == []


@pytest.mark.django_db
def test_a_namespace_the_dashboard_holds_nothing_of_is_allowed(demo: Cluster, webhook: APIClient) -> None:
    runtime = stored(demo, "ServingRuntime", "team-a-sglang-llama", "team-a")
    runtime["metadata"] = {"name": "team-a-sglang-llama", "namespace": "elsewhere"}

    warnings = answer(webhook, review("CREATE", runtime))

    assert not any("only runtime" in warning or "moves" in warning for warning in warnings)
    assert answer(webhook, review("DELETE", None, runtime)) == []


@pytest.mark.django_db
def test_a_namespace_the_token_may_not_read_gets_no_warning(
    demo: Cluster, settings: Settings, webhook: APIClient
) -> None:
    settings.API_ANONYMOUS_READ = False
    user = User.objects.create_user("team-b-webhook")
    grant(user, "viewer", namespace="team-b")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user, name='webhook')[1]}")
    old = stored(demo, "ServingRuntime", "team-a-sglang-llama", "team-a")
    profile = copy.deepcopy(old)
    profile["metadata"]["annotations"] = {"ome.io/runtime-profile": "true"}

    assert answer(webhook, review("DELETE", None, old)) != []
    assert answer(client, review("DELETE", None, old)) == []
    assert answer(client, review("UPDATE", profile, old)) == []


@pytest.mark.django_db
def test_a_malformed_body_is_a_400_naming_the_field(demo: Cluster, webhook: APIClient) -> None:
    response = webhook.post(URL, "{not json", content_type="application/json")
    assert response.status_code == 400

    response = webhook.post(URL, {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, format="json")
    assert response.status_code == 400
    assert "request" in response.content.decode()

    body = review("CREATE", stored(demo, "ClusterServingRuntime", "srt-qwen-image"))
    del body["request"]["uid"]
    response = webhook.post(URL, body, format="json")
    assert response.status_code == 400
    assert "request.uid" in response.content.decode()


@pytest.mark.django_db
def test_an_unreadable_object_in_a_review_is_allowed_with_a_warning(demo: Cluster, webhook: APIClient) -> None:
    runtime = stored(demo, "ClusterServingRuntime", "srt-qwen-image")
    runtime["spec"]["supportedModelFormats"] = "safetensors"

    warnings = answer(webhook, review("UPDATE", runtime, stored(demo, "ClusterServingRuntime", "srt-qwen-image")))

    assert len(warnings) == 1
    assert warnings[0].startswith("OME Compat: cannot evaluate the change: ")
    assert "spec.supportedModelFormats" in warnings[0]


@pytest.mark.django_db
def test_without_a_token_the_api_server_gets_a_401(demo: Cluster, settings: Settings) -> None:
    settings.API_ANONYMOUS_READ = False
    body = review("CREATE", stored(demo, "ClusterServingRuntime", "srt-qwen-image"))
    assert APIClient().post(URL, body, format="json").status_code in (401, 403)


@pytest.mark.django_db
def test_an_unknown_cluster_is_allowed_without_warnings(demo: Cluster, webhook: APIClient) -> None:
    body = review("DELETE", None, stored(demo, "ClusterServingRuntime", "srt-qwen-image"))
    response = webhook.post("/api/v1/admission/nowhere/", body, format="json")
    assert response.status_code == 200
    assert response.json()["response"] == {"uid": body["request"]["uid"], "allowed": True}


# ------------------------------------------------------------------------------------------
# The what-if and the cluster check refuse a runtime OME's runtime webhook would refuse, as the
# API server would (ome-docs runtime-inheritance.md, "What admission checks").


@pytest.mark.django_db
def test_the_whatif_refuses_an_enabled_profile_naming_the_object_and_field(demo: Cluster) -> None:
    new = stored(demo, "ClusterServingRuntime", "srt-qwen-image")
    new["metadata"] = {"name": "srt-qwen-image-v2", "annotations": {"ome.io/runtime-profile": "true"}}

    with pytest.raises(WhatIfError) as refused:
        whatif(demo, [new], scope=SYSTEM)

    assert refused.value.obj == "ClusterServingRuntime srt-qwen-image-v2"
    assert refused.value.field == "metadata.annotations.ome.io/runtime-profile"
    assert refused.value.problem == (
        'admission webhook "clusterservingruntime.ome-webhook-server.validator" denied the request: ' + PROFILE_TEXT
    )
    new["spec"]["disabled"] = True
    assert whatif(demo, [new], scope=SYSTEM).objects[0].action == "added"


@pytest.mark.django_db
def test_the_cluster_check_refuses_a_broken_chain(demo: Cluster) -> None:
    child = stored(demo, "ServingRuntime", "team-a-sglang-llama", "team-a")
    child["metadata"]["annotations"] = {"ome.io/inherit-from": "sglang-profile"}
    items = [(child, matching.parse_runtime(child))]

    with pytest.raises(WhatIfError, match=r"inherit-from parent \"sglang-profile\" not found") as refused:
        check_cluster(demo, items, scope=SYSTEM)

    assert refused.value.field == "metadata.annotations.ome.io/inherit-from"
