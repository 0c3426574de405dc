"""The cell explanation, its one-line reason, and the model page."""

from __future__ import annotations

import copy
import re

from django.test import Client
from django.urls import reverse

from inventory.models import Cluster, Resource
from inventory.sync import event_apply
from matrix.models import CellChange, MatrixBuild, MatrixRow
from matrix.services import matrix_apply_changes
from tests.web.conftest import CATALOG_RUNTIME, SEED_MODEL, SEED_RUNTIME

OME_REASON = (
    "model format &#x27;mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0&#x27; not in supported "
    "formats: diffusion pipeline required by runtime but not specified in model"
)
PIPELINE = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}


def cell_url(model: Resource, runtime: Resource, scope: str = "_cluster") -> str:
    return reverse("matrix:cell", args=[model.pk, runtime.pk, scope])


def test_the_seed_cell_shows_omes_reason_every_check_with_both_values_and_the_patch_button(
    client: Client, seed_model: Resource, seed_runtime: Resource
) -> None:
    response = client.get(cell_url(seed_model, seed_runtime))

    html = response.content.decode()
    assert response.status_code == 200
    assert '<span class="badge s-excluded" id="cell-status">excluded</span>' in html
    assert f'<blockquote class="ome-reason" id="ome-reason">{OME_REASON}</blockquote>' in html
    pipeline_check = re.search(
        r"<th scope=\"row\">pipeline</th>\s*<td[^>]*><code>(.*?)</code></td>\s*<td[^>]*><code>(.*?)</code></td>\s*<td[^>]*>(.*?)</td>",
        html,
    )
    assert pipeline_check.groups() == ("\u2014", "QwenImagePipeline", "\u2717 fails")
    architecture = re.search(
        r"<th scope=\"row\">architecture</th>\s*<td[^>]*><code>(.*?)</code></td>\s*<td[^>]*><code>(.*?)</code></td>",
        html,
    )
    assert architecture.groups() == ("QwenImagePipeline", "QwenImagePipeline")
    assert (
        "First mismatch, as OME reports it: <q>diffusion pipeline required by runtime but not specified in model</q>"
        in html
    )
    assert f'action="{reverse("patches:patch", args=[seed_model.pk])}"' in html
    assert f'name="runtime" value="{seed_runtime.pk}"' in html
    assert "Make this model match" in html


def test_a_selected_cell_shows_its_rank_and_the_score_arithmetic(
    client: Client, build: MatrixBuild, seed_model: Resource, catalog_runtime: Resource
) -> None:
    score = MatrixRow.objects.get(build=build, model=seed_model, namespace="").selected_score

    html = client.get(cell_url(seed_model, catalog_runtime)).content.decode()

    assert '<span class="badge s-selected" id="cell-status">selected</span>' in html
    assert f"OME picks this runtime for the model, with score <strong>{score}</strong>" in html
    assert f"OME scores the runtime <strong>{score}</strong>" in html
    assert re.search(r"Score of this entry: <code>.*? [x\u00d7] \d+ = " + str(score) + "</code>", html)
    assert 'id="ome-reason"' not in html
    assert "Make this model match" not in html


def test_the_reason_line_names_the_cell_its_status_and_omes_reason(
    client: Client, seed_model: Resource, seed_runtime: Resource, htmx: dict[str, str]
) -> None:
    response = client.get(cell_url(seed_model, seed_runtime) + "reason/", headers=htmx)

    html = response.content.decode()
    assert response.status_code == 200
    assert html.startswith(f"<strong>{SEED_MODEL}</strong> \u00d7 <strong>{SEED_RUNTIME}</strong>:")
    assert '<span class="badge s-excluded">excluded</span>' in html
    assert OME_REASON in html
    assert "<html" not in html


def test_a_manual_only_cell_says_why_auto_selection_skips_it(client: Client, cluster: Cluster) -> None:
    model = Resource.objects.get(cluster=cluster, name="llama-3-1-8b-instruct")
    runtime = Resource.objects.get(cluster=cluster, name="srt-llama-3-1-8b-instruct")

    html = client.get(cell_url(model, runtime, "team-b")).content.decode()

    assert "manual-only" in html
    assert "automatic selection skips it" in html
    assert 'id="ome-reason"' in html


def test_a_runtime_out_of_the_rows_scope_has_no_cell(client: Client, cluster: Cluster, seed_model: Resource) -> None:
    team_a_runtime = Resource.objects.get(cluster=cluster, kind="ServingRuntime", namespace="team-a")

    assert client.get(cell_url(seed_model, team_a_runtime, "team-b")).status_code == 404
    assert client.get(cell_url(seed_model, team_a_runtime, "team-a")).status_code == 200


def test_cells_of_objects_that_are_not_a_model_and_a_runtime_do_not_exist(
    client: Client, seed_model: Resource, seed_runtime: Resource
) -> None:
    assert client.get(cell_url(seed_runtime, seed_model)).status_code == 404


def test_the_model_page_shows_metadata_pipeline_rankings_exclusions_services_and_patch_buttons(
    client: Client, seed_model: Resource, seed_runtime: Resource, catalog_runtime: Resource
) -> None:
    response = client.get(reverse("matrix:model", args=[seed_model.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert "<code>pvc://research:qwen-image-models/Qwen-Image</code>" in html
    assert "<dt>Architecture</dt><dd>QwenImagePipeline</dd>" in html
    assert 'id="no-pipeline"' in html
    assert "OME records none for <code>pvc://</code> models" in html
    ranked = html.split("Auto-selectable, best first")[1].split("</table>")[0]
    assert CATALOG_RUNTIME in ranked
    assert "OME's pick" in ranked
    excluded = html.split("Excluded runtimes")[1]
    assert re.search(r"Excluded runtimes \(\d{3}\), each with OME's reason", html)
    first_row = excluded.split("<tbody>")[1].split("</tr>")[0]
    assert SEED_RUNTIME in first_row
    assert "diffusion pipeline required by runtime but not specified in model" in first_row
    assert f"{reverse('patches:patch', args=[seed_model.pk])}?runtime={seed_runtime.pk}" in first_row
    assert "research/qwen-image-pipeline" in html
    assert "used anyway (advisory)" in html
    assert reverse("patches:model-index", args=[seed_model.pk]) in html


def test_the_model_page_has_a_tab_per_namespace_with_its_own_ranking(client: Client, seed_model: Resource) -> None:
    html = client.get(reverse("matrix:model", args=[seed_model.pk]), {"namespace": "team-b"}).content.decode()

    tabs = re.findall(r'<a href="\?namespace=([^"]+)"( aria-current="true")?>', html)
    assert [name for name, _current in tabs] == ["_cluster", "research", "team-a", "team-b"]
    assert dict(tabs)["team-b"]
    assert "Auto-selectable, best first (namespace team-b)" in html


def test_the_model_page_says_who_set_each_pipeline_field_when_managed_fields_tell(
    client: Client, cluster: Cluster, seed_model: Resource
) -> None:
    obj = copy.deepcopy(seed_model.obj)
    obj["spec"]["diffusionPipeline"] = PIPELINE
    obj["metadata"]["managedFields"] = [
        {
            "manager": "ome-model-agent",
            "operation": "Update",
            "fieldsV1": {"f:spec": {"f:diffusionPipeline": {"f:className": {}}}},
        },
        {
            "manager": "kubectl-patch",
            "operation": "Update",
            "fieldsV1": {"f:spec": {"f:diffusionPipeline": {"f:transformer": {".": {}, "f:library": {}}}}},
        },
    ]
    event_apply(cluster, "MODIFIED", obj)

    html = client.get(reverse("matrix:model", args=[seed_model.pk])).content.decode()

    rows = dict(
        re.findall(r"<th scope=\"row\"><code>([\w.]+)</code></th><td><code>[^<]*</code></td>\s*<td>(.*?)</td>", html)
    )
    assert rows["className"].startswith("filled by OME")
    assert "ome-model-agent (Update)" in rows["className"]
    assert rows["transformer.library"].startswith("set by a user or another tool")
    assert "kubectl-patch (Update)" in rows["transformer.library"]
    assert 'id="provenance"' not in html


def test_without_managed_fields_the_model_page_says_provenance_cannot_be_told(
    client: Client, cluster: Cluster, seed_model: Resource
) -> None:
    obj = copy.deepcopy(seed_model.obj)
    obj["spec"]["diffusionPipeline"] = PIPELINE
    event_apply(cluster, "MODIFIED", obj)

    html = client.get(reverse("matrix:model", args=[seed_model.pk])).content.decode()

    assert "cannot be told" in html
    assert "no metadata.managedFields" in html


def test_the_model_page_lists_the_cell_history(client: Client, cluster: Cluster, seed_model: Resource) -> None:
    obj = copy.deepcopy(seed_model.obj)
    obj["spec"]["diffusionPipeline"] = PIPELINE
    event_apply(cluster, "MODIFIED", obj)
    matrix_apply_changes(
        cluster,
        [
            {
                "kind": "ClusterBaseModel",
                "namespace": "",
                "name": SEED_MODEL,
                "action": "changed",
                "fields": ["spec.diffusionPipeline"],
            }
        ],
    )
    assert CellChange.objects.filter(model_name=SEED_MODEL).exists()

    html = client.get(reverse("matrix:model", args=[seed_model.pk])).content.decode()

    history = html.split("Cell history")[1]
    assert SEED_RUNTIME in history
    assert (
        '<span class="badge s-excluded">excluded</span> \u2192 <span class="badge s-selected">selected</span>'
        in history
    )
    assert "ClusterBaseModel qwen-image-pvc changed (spec.diffusionPipeline)" in history


def test_a_cell_of_a_namespace_that_cannot_mount_the_models_claim_says_it_is_unusable_there(
    client: Client, seed_model: Resource, cluster: Cluster
) -> None:
    # The seed model is on pvc://research:...: v1.3's webhook refuses it to services of other
    # namespaces (validateClusterBaseModelPVCNamespace, ome-projects/ome
    # pkg/webhook/admission/isvc/inference_service_validation.go at 58a57f25).
    runtime = Resource.objects.get(cluster=cluster, kind="ClusterServingRuntime", name=CATALOG_RUNTIME)

    elsewhere = client.get(cell_url(seed_model, runtime, "team-a")).content.decode()
    at_home = client.get(cell_url(seed_model, runtime, "research")).content.decode()

    assert 'id="unusable-here"' in elsewhere
    assert "Unusable from namespace team-a" in elsewhere
    assert (
        "ClusterBaseModel &quot;qwen-image-pvc&quot; references PVC in namespace &quot;research&quot;, but "
        "InferenceService is in namespace &quot;team-a&quot;"
    ) in elsewhere
    assert 'id="unusable-here"' not in at_home


def test_the_model_pages_namespace_tab_says_where_the_model_is_unusable(client: Client, seed_model: Resource) -> None:
    elsewhere = client.get(reverse("matrix:model", args=[seed_model.pk]), {"namespace": "team-b"}).content.decode()
    at_home = client.get(reverse("matrix:model", args=[seed_model.pk]), {"namespace": "research"}).content.decode()

    assert "Unusable from namespace team-b" in elsewhere
    assert 'id="unusable-here"' not in at_home
