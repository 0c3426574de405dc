"""The patches API: preview, apply and the audit log, with errors that name the bad field."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

import matching
from inventory.models import Cluster, Resource
from patches.models import PatchAttempt
from patches.services import MAX_UPLOAD_BYTES, version_of
from tests.fakes.kube_api import FakeKubeAPI
from tests.patches.seed import MODEL, PIPELINE, RUNTIME, SEED_PATCH

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.patches.urls")]


def client_for(user: Any = None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def post(client: APIClient, name: str, data: dict[str, Any]) -> Any:
    return client.post(reverse(f"api:patch-{name}"), data, format="json")


def seen(cluster: Cluster) -> str:
    return version_of(cluster, Resource.objects.get(cluster=cluster, name="qwen-image-pvc"))


def apply_body(cluster: Cluster, patch: Any = SEED_PATCH, **extra: Any) -> dict[str, Any]:
    return {"cluster": cluster.name, "model": MODEL, "patch": patch, "resource_version": seen(cluster), **extra}


# ---- preview -----------------------------------------------------------------------------------


def test_preview_of_a_runtime_plan_returns_patch_objects_matrix_diff_and_kubectl(
    snapshot: Cluster, reader: Any
) -> None:
    response = post(client_for(reader), "preview", {"cluster": "seed", "model": MODEL, "runtime": RUNTIME})

    assert response.status_code == 200
    body = response.json()
    assert body["patch"] == SEED_PATCH
    assert body["plan"] == {"behaviour": matching.NEWEST_BEHAVIOUR, "patch": SEED_PATCH, "entry": 0, "blocked": []}
    assert body["kubectl"].startswith("kubectl patch clusterbasemodel qwen-image-pvc --type merge -p '")
    assert body["after"]["spec"]["diffusionPipeline"] == PIPELINE
    assert body["matrix_diff"]["summary"]["picks_changed"] >= 1
    assert body["resource_version"] == seen(snapshot)
    assert (body["target"], body["model"]["kind"], body["runtime"]["name"]) == (
        "inventory",
        "ClusterBaseModel",
        "srt-qwen-image-pipeline",
    )


def test_preview_takes_model_and_runtime_ids(snapshot: Cluster, reader: Any) -> None:
    model = Resource.objects.get(cluster=snapshot, name="qwen-image-pvc")
    runtime = Resource.objects.get(cluster=snapshot, name="srt-qwen-image-pipeline")

    response = post(client_for(reader), "preview", {"cluster": snapshot.pk, "model": model.pk, "runtime": runtime.pk})

    assert response.status_code == 200
    assert response.json()["patch"] == SEED_PATCH


def test_preview_of_an_explicit_pipeline(snapshot: Cluster, reader: Any) -> None:
    response = post(client_for(reader), "preview", {"cluster": "seed", "model": MODEL, "diffusion_pipeline": PIPELINE})

    assert response.status_code == 200
    assert response.json()["patch"] == SEED_PATCH


def test_preview_from_a_model_index(snapshot: Cluster, reader: Any) -> None:
    index = {"_class_name": "QwenImagePipeline", "transformer": ["diffusers", "QwenImageTransformer2DModel"]}

    response = post(
        client_for(reader), "preview", {"cluster": "seed", "model": MODEL, "model_index": json.dumps(index)}
    )

    assert response.status_code == 200
    assert response.json()["patch"]["spec"]["diffusionPipeline"] == {
        "className": "QwenImagePipeline",
        "transformer": {"library": "diffusers", "type": "QwenImageTransformer2DModel"},
    }


@pytest.mark.parametrize(
    ("data", "status", "field"),
    [
        ({"cluster": "seed", "runtime": RUNTIME}, 400, "model"),
        ({"cluster": "seed", "model": MODEL}, 400, "runtime"),
        ({"cluster": "seed", "model": MODEL, "runtime": RUNTIME, "diffusion_pipeline": PIPELINE}, 400, "runtime"),
        ({"cluster": "nope", "model": MODEL, "runtime": RUNTIME}, 404, "cluster"),
        ({"cluster": "seed", "model": "ClusterBaseModel/nope", "runtime": RUNTIME}, 404, "model"),
        ({"cluster": "seed", "model": True, "runtime": RUNTIME}, 400, "model"),
        ({"cluster": "seed", "model": MODEL, "diffusion_pipeline": "QwenImagePipeline"}, 400, "diffusion_pipeline"),
        (
            {"cluster": "seed", "model": MODEL, "diffusion_pipeline": {"className": 1}},
            400,
            "diffusion_pipeline.className",
        ),
        ({"cluster": "seed", "model": MODEL, "patch": {"spec": {"vendor": "x"}}}, 400, "patch.spec.vendor"),
        ({"cluster": "seed", "model": MODEL, "model_index": "{"}, 400, "model_index"),
    ],
    ids=[
        "no-model",
        "no-source",
        "two-sources",
        "unknown-cluster",
        "unknown-model",
        "bad-model-reference",
        "pipeline-not-object",
        "unreadable-pipeline",
        "non-pipeline-patch",
        "bad-model-index",
    ],
)
def test_preview_errors_name_the_bad_field(
    snapshot: Cluster, reader: Any, data: dict[str, Any], status: int, field: str
) -> None:
    response = post(client_for(reader), "preview", data)

    assert response.status_code == status
    body = response.json()
    assert body["field"] == field
    assert body["detail"]
    assert body["code"]


def test_preview_needs_a_login(snapshot: Cluster) -> None:
    response = post(client_for(), "preview", {"cluster": "seed", "model": MODEL, "runtime": RUNTIME})

    assert response.status_code in (401, 403)


def test_a_model_index_is_turned_into_a_pipeline(reader: Any) -> None:
    index = {"_class_name": "QwenImagePipeline", "vae": ["diffusers", "AutoencoderKLQwenImage"]}

    response = post(client_for(reader), "pipeline-from-model-index", {"model_index": json.dumps(index)})

    assert response.status_code == 200
    assert response.json() == {
        "diffusion_pipeline": {
            "className": "QwenImagePipeline",
            "vae": {"library": "diffusers", "type": "AutoencoderKLQwenImage"},
        }
    }


def test_a_too_large_model_index_is_refused(reader: Any) -> None:
    response = post(client_for(reader), "pipeline-from-model-index", {"model_index": " " * (MAX_UPLOAD_BYTES + 1)})

    assert response.status_code == 400
    assert response.json()["field"] == "model_index"


# ---- apply -------------------------------------------------------------------------------------


def test_apply_patches_the_live_model_and_returns_the_new_object_and_resource_version(
    live: Cluster, fake: FakeKubeAPI, applier: Any
) -> None:
    response = post(client_for(applier), "apply", apply_body(live, runtime=RUNTIME))

    assert response.status_code == 200
    body = response.json()
    on_server = fake.get("ClusterBaseModel", "qwen-image-pvc")
    assert on_server is not None
    assert (body["result"], body["target"]) == ("applied", "cluster")
    assert body["resource_version"] == on_server["metadata"]["resourceVersion"]
    assert body["object"]["spec"]["diffusionPipeline"] == PIPELINE
    assert body["attempt"]["runtime"] == RUNTIME
    assert body["attempt"]["user"] == "ada"


def test_apply_of_a_non_pipeline_field_is_a_400_naming_it(live: Cluster, fake: FakeKubeAPI, applier: Any) -> None:
    patch = {"spec": {"diffusionPipeline": PIPELINE, "modelFormat": {"name": "safetensors"}}}

    response = post(client_for(applier), "apply", apply_body(live, patch))

    assert response.status_code == 400
    assert response.json()["field"] == "patch.spec.modelFormat"
    assert response.json()["code"] == "rejected"
    assert not [r for r in fake.requests if r.method == "PATCH"]


def test_apply_without_the_permission_is_a_403_and_recorded(live: Cluster, fake: FakeKubeAPI, reader: Any) -> None:
    response = post(client_for(reader), "apply", apply_body(live))

    assert response.status_code == 403
    assert response.json()["code"] == "denied"
    assert PatchAttempt.objects.get().username == "bob"
    assert not [r for r in fake.requests if r.method == "PATCH"]


def test_apply_without_a_login_is_refused_and_not_recorded(live: Cluster) -> None:
    response = post(client_for(), "apply", apply_body(live))

    assert response.status_code in (401, 403)
    assert not PatchAttempt.objects.exists()


def test_apply_after_the_model_changed_is_a_409(live: Cluster, fake: FakeKubeAPI, applier: Any) -> None:
    body = apply_body(live)
    fake.patch("ClusterBaseModel", "qwen-image-pvc", {"spec": {"vendor": "someone else"}})

    response = post(client_for(applier), "apply", body)

    on_server = fake.get("ClusterBaseModel", "qwen-image-pvc")
    assert response.status_code == 409
    assert response.json()["code"] == "conflict"
    assert on_server is not None
    assert on_server["spec"]["vendor"] == "someone else"
    assert "diffusionPipeline" not in on_server["spec"]
    assert response.json()["current"]["resource_version"] == on_server["metadata"]["resourceVersion"]


def test_apply_sent_twice_is_already_applied_the_second_time(live: Cluster, applier: Any) -> None:
    body = apply_body(live)
    client = client_for(applier)

    first, second = post(client, "apply", body), post(client, "apply", body)

    assert (first.status_code, second.status_code) == (200, 200)
    assert (first.json()["result"], second.json()["result"]) == ("applied", "already_applied")


@pytest.mark.parametrize("status", [401, 403])
def test_apply_refused_by_the_cluster_is_a_502_saying_so(
    live: Cluster, fake: FakeKubeAPI, applier: Any, status: int
) -> None:
    fake.fail_next(status=status, verbs="patch")

    response = post(client_for(applier), "apply", apply_body(live))

    assert response.status_code == 502
    assert response.json()["code"] == "unauthorized"
    assert response.json()["detail"].startswith("the cluster refused the credentials")


def test_apply_to_a_manifest_snapshot_says_the_files_are_untouched(snapshot: Cluster, applier: Any) -> None:
    response = post(client_for(applier), "apply", apply_body(snapshot))

    assert response.status_code == 200
    assert response.json()["target"] == "inventory"
    assert "Reloading the folder will revert it" in response.json()["detail"]


@pytest.mark.parametrize(
    ("change", "field"),
    [({"patch": "x"}, "patch"), ({"resource_version": ""}, "resource_version"), ({"cluster": ""}, "cluster")],
)
def test_apply_with_a_malformed_body_names_the_field(
    snapshot: Cluster, applier: Any, change: dict[str, Any], field: str
) -> None:
    response = post(client_for(applier), "apply", {**apply_body(snapshot), **change})

    assert response.status_code == 400
    assert response.json()["field"] == field


# ---- the audit log -----------------------------------------------------------------------------


@pytest.fixture
def history(snapshot: Cluster, live: Cluster, applier: Any, reader: Any) -> None:
    client = client_for(applier)
    post(client, "apply", apply_body(snapshot))
    post(client, "apply", apply_body(live, {"spec": {"disabled": True}}))
    post(client_for(reader), "apply", apply_body(live))


def audit(client: APIClient, **query: str) -> Any:
    return client.get(reverse("api:patch-audit-list"), query)


def test_the_audit_log_lists_every_attempt_newest_first(history: None, auditor: Any) -> None:
    response = audit(client_for(auditor))

    assert response.status_code == 200
    rows = response.json()["results"]
    assert [(row["cluster"], row["user"], row["result"]) for row in rows] == [
        ("live", "bob", "denied"),
        ("live", "ada", "rejected"),
        ("seed", "ada", "applied"),
    ]
    assert rows[0]["model"] == {"kind": "ClusterBaseModel", "namespace": "_cluster", "name": "qwen-image-pvc"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"cluster": "seed"}, ["applied"]),
        ({"user": "bob"}, ["denied"]),
        ({"result": "rejected"}, ["rejected"]),
        ({"model": "qwen-image-pvc", "cluster": "live"}, ["denied", "rejected"]),
        ({"model": "other"}, []),
    ],
)
def test_the_audit_log_filters_by_cluster_model_user_and_result(
    history: None, auditor: Any, query: dict[str, str], expected: list[str]
) -> None:
    response = audit(client_for(auditor), **query)

    assert [row["result"] for row in response.json()["results"]] == expected


def test_the_audit_log_needs_a_login(history: None) -> None:
    assert audit(client_for()).status_code in (401, 403)


def test_the_audit_log_cannot_be_written_through_the_api(history: None, applier: Any) -> None:
    client = client_for(applier)
    applier.is_superuser = True
    attempt = PatchAttempt.objects.first()
    assert attempt is not None
    detail = reverse("api:patch-audit-detail", args=[attempt.pk])

    assert client.get(detail).status_code == 200
    assert client.put(detail, {"result": "applied"}, format="json").status_code == 405
    assert client.patch(detail, {"result": "applied"}, format="json").status_code == 405
    assert client.delete(detail).status_code == 405
    assert client.post(reverse("api:patch-audit-list"), {"result": "applied"}, format="json").status_code == 405
    assert PatchAttempt.objects.count() == 3
