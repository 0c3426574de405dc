"""The one-click pipeline patch: preview, apply (through patches.services), the result with the
refreshed matrix, permission errors and conflicts; and "Fill from model_index.json"."""

from __future__ import annotations

import copy
import json
import re
from typing import Any
from urllib.parse import urlencode

from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from inventory.models import Cluster, Resource
from inventory.sync import event_apply
from patches.models import PatchAttempt
from patches.services import version_of
from tests.support.grid import grid_cells
from tests.web.conftest import CATALOG_RUNTIME, SEED_MODEL, SEED_RUNTIME

PATCH = {"spec": {"diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}}}
MODEL_INDEX = {
    "_class_name": "QwenImagePipeline",
    "_diffusers_version": "0.34.0.dev0",
    "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
    "transformer": ["diffusers", "QwenImageTransformer2DModel"],
    "vae": ["diffusers", "AutoencoderKLQwenImage"],
    "safety_checker": ["diffusers", "Checker"],
}


def preview_url(model: Resource, runtime: Resource) -> str:
    return f"{reverse('patches:patch', args=[model.pk])}?runtime={runtime.pk}"


def apply(client: Client, model: Resource, runtime: Resource, *, version: str, **extra: Any) -> Any:
    return client.post(
        reverse("patches:patch", args=[model.pk]),
        {"patch": json.dumps(PATCH), "resource_version": version, "runtime": str(runtime.pk)},
        **extra,
    )


def test_the_preview_shows_the_merge_patch_the_kubectl_command_the_diff_and_the_cells_that_change(
    client: Client, seed_model: Resource, seed_runtime: Resource
) -> None:
    response = client.get(preview_url(seed_model, seed_runtime))

    html = response.content.decode()
    assert response.status_code == 200
    merge = re.search(r'<pre class="code" id="merge-patch">(.*?)</pre>', html, re.S).group(1)
    assert json.loads(merge.replace("&quot;", '"')) == PATCH
    kubectl = re.search(r'<pre class="code" id="kubectl">(.*?)</pre>', html, re.S).group(1)
    assert kubectl == (
        "kubectl patch clusterbasemodel qwen-image-pvc --type merge -p "
        "&#x27;{&quot;spec&quot;:{&quot;diffusionPipeline&quot;:{&quot;className&quot;:&quot;QwenImagePipeline&quot;,"
        "&quot;transformer&quot;:{&quot;library&quot;:&quot;diffusers&quot;}}}}&#x27;"
    )
    assert '<span class="add">+  diffusionPipeline:</span>' in html
    assert '<span class="add">+    className: QwenImagePipeline</span>' in html
    changes = html.split("Which cells of the matrix change")[1].split("</table>")[0]
    assert re.search(
        rf'<strong class="pick-change">{CATALOG_RUNTIME} \(\d+\) \u2192 {SEED_RUNTIME} \(\d+\)</strong>', changes
    )
    assert changes.count('<strong class="pick-change">') == 4  # cluster scope and the three namespaces
    assert f'<span class="badge s-compatible">{SEED_RUNTIME}</span>' in changes  # what the model wins


def test_anonymous_users_see_the_preview_and_are_asked_to_sign_in_to_apply(
    client: Client, seed_model: Resource, seed_runtime: Resource
) -> None:
    html = client.get(preview_url(seed_model, seed_runtime)).content.decode()

    assert "Sign in to apply" in html
    assert 'id="confirm"' not in html


def test_an_anonymous_apply_goes_to_the_login_page_and_changes_nothing(
    client: Client, seed_model: Resource, seed_runtime: Resource
) -> None:
    response = apply(client, seed_model, seed_runtime, version="x")

    assert response.status_code == 302
    assert response["Location"] == (
        f"/accounts/login/?next={reverse('patches:patch', args=[seed_model.pk])}%3Fruntime%3D{seed_runtime.pk}"
    )
    assert not PatchAttempt.objects.exists()


def test_a_user_without_the_patcher_role_is_warned_and_refused_plainly(
    viewer_client: Client, cluster: Cluster, seed_model: Resource, seed_runtime: Resource
) -> None:
    preview = viewer_client.get(preview_url(seed_model, seed_runtime)).content.decode()

    response = apply(viewer_client, seed_model, seed_runtime, version=version_of(cluster, seed_model))

    html = response.content.decode()
    assert 'id="no-permission"' in preview
    assert response.status_code == 403
    assert "Permission denied: nothing was changed" in html
    assert "needs the patcher role" in html
    assert PatchAttempt.objects.get().result == PatchAttempt.Result.DENIED
    seed_model.refresh_from_db()
    assert "diffusionPipeline" not in seed_model.obj["spec"]


def test_applying_redirects_to_the_result_with_the_models_refreshed_row(
    patcher_client: Client,
    cluster: Cluster,
    seed_model: Resource,
    seed_runtime: Resource,
    eager_celery: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = apply(patcher_client, seed_model, seed_runtime, version=version_of(cluster, seed_model))

    attempt = PatchAttempt.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("patches:patch-result", args=[attempt.pk])
    assert attempt.result == PatchAttempt.Result.APPLIED
    assert attempt.runtime == f"ClusterServingRuntime/{SEED_RUNTIME}"
    result = patcher_client.get(response["Location"]).content.decode()
    assert "<h1>Patch applied</h1>" in result
    cells = grid_cells(result)
    assert cells[(SEED_MODEL, SEED_RUNTIME)].status == "selected"
    assert cells[(SEED_MODEL, CATALOG_RUNTIME)].status == "compatible"
    assert reverse("matrix:cell", args=[seed_model.pk, seed_runtime.pk, "_cluster"]) in result


def test_a_model_changed_since_the_preview_is_a_conflict_with_a_fresh_preview(
    patcher_client: Client, cluster: Cluster, seed_model: Resource, seed_runtime: Resource
) -> None:
    seen = version_of(cluster, seed_model)
    changed = copy.deepcopy(seed_model.obj)
    changed["metadata"]["labels"] = {"team": "imaging"}
    event_apply(cluster, "MODIFIED", changed)
    seed_model.refresh_from_db()

    response = apply(patcher_client, seed_model, seed_runtime, version=seen)

    html = response.content.decode()
    assert response.status_code == 409
    assert "Conflict: the model changed since you looked at it" in html
    assert f'name="resource_version" value="{version_of(cluster, seed_model)}"' in html
    assert PatchAttempt.objects.get().result == PatchAttempt.Result.CONFLICT
    assert "diffusionPipeline" not in seed_model.obj["spec"]


def test_only_the_user_who_applied_sees_the_result_others_get_the_answer_of_a_missing_one(
    patcher_client: Client, cluster: Cluster, seed_model: Resource, seed_runtime: Resource, viewer: Any
) -> None:
    apply(patcher_client, seed_model, seed_runtime, version=version_of(cluster, seed_model))
    attempt = PatchAttempt.objects.get()
    patcher_client.force_login(viewer)

    hidden = patcher_client.get(reverse("patches:patch-result", args=[attempt.pk]))
    missing = patcher_client.get(reverse("patches:patch-result", args=[attempt.pk + 1000]))
    # Answered as a patch that does not exist: the record is not even confirmed to exist.
    assert hidden.status_code == missing.status_code == 404


def test_a_runtime_that_no_pipeline_patch_can_help_says_why(
    client: Client, cluster: Cluster, seed_model: Resource
) -> None:
    llm_runtime = Resource.objects.get(cluster=cluster, name="srt-qwen3-8b")

    html = client.get(preview_url(seed_model, llm_runtime)).content.decode()

    assert "No diffusionPipeline patch can make the model pass this runtime" in html
    assert 'id="merge-patch"' not in html


def test_model_index_json_gives_the_pipeline_ome_would_record_and_a_preview_link(
    client: Client, seed_model: Resource
) -> None:
    response = client.post(reverse("patches:model-index", args=[seed_model.pk]), {"text": json.dumps(MODEL_INDEX)})

    html = response.content.decode()
    assert response.status_code == 200
    pipeline = re.search(r'<pre class="code" id="pipeline">(.*?)</pre>', html, re.S).group(1)
    assert "className: QwenImagePipeline" in pipeline
    assert "additionalComponents:\n    safety_checker:" in pipeline
    link = re.search(r'href="(/models/\d+/patch/\?[^"]+)"', html).group(1).replace("&amp;", "&")
    preview = client.get(link).content.decode()
    assert "&quot;safety_checker&quot;" in preview
    assert "Which cells of the matrix change" in preview


def test_model_index_json_can_be_uploaded(client: Client, seed_model: Resource) -> None:
    upload = SimpleUploadedFile("model_index.json", json.dumps(MODEL_INDEX).encode(), content_type="application/json")

    response = client.post(reverse("patches:model-index", args=[seed_model.pk]), {"file": upload})

    assert response.status_code == 200
    assert "QwenImageTransformer2DModel" in response.content.decode()


def test_a_model_index_json_that_is_not_json_is_an_error_shown_plainly(client: Client, seed_model: Resource) -> None:
    response = client.post(reverse("patches:model-index", args=[seed_model.pk]), {"text": "{not json"})

    html = response.content.decode()
    assert response.status_code == 400
    assert 'id="model-index-error"' in html
    assert "model_index.json is not valid JSON" in html


def test_a_preview_of_a_pipeline_that_is_not_json_is_a_bad_request(client: Client, seed_model: Resource) -> None:
    url = f"{reverse('patches:patch', args=[seed_model.pk])}?{urlencode({'pipeline': '{oops'})}"

    response = client.get(url)

    assert response.status_code == 400
    assert "the pipeline is not JSON" in response.content.decode()
