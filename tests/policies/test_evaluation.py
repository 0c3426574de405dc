"""Policies in the dashboard: loaded from files (versioned), evaluated on the demo cluster,
each assertion's state recorded with since-when and the change that flipped it; the Policies
page and the API show it; POST /api/v1/policies/check/ checks manifests against clusters."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.test import APIClient

from inventory.models import Cluster, Resource
from inventory.sync import event_apply
from policies.evaluation import policies_evaluate
from policies.models import AssertionState, Policy, PolicyRevision
from policies.services import policies_load_files
from tests.support.access import grant

ROOT = Path(django_settings.BASE_DIR)
POLICIES = ROOT / "demo/policies"
SEED_ASSERTION = "qwen-image-pvc-on-pipeline-runtime"
PIPELINE = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}


def patch_seed_model(cluster: Cluster) -> dict[str, Any]:
    """The seed patch applied to the stored model, as a watch event stores it; its change."""
    model = Resource.objects.get(cluster=cluster, name="qwen-image-pvc")
    obj = dict(model.obj)
    obj["spec"] = {**obj["spec"], "diffusionPipeline": PIPELINE}
    obj["metadata"] = {**obj["metadata"], "resourceVersion": "seed-patched"}
    change = event_apply(cluster, "MODIFIED", obj)
    assert change is not None
    return change.to_dict()


def test_load_policies_stores_each_document_and_versions_a_changed_one(db: None, tmp_path: Path) -> None:
    out = io.StringIO()
    call_command("load_policies", str(POLICIES), stdout=out)
    assert out.getvalue().endswith("3 created, 0 changed, 0 unchanged\n")

    changed = tmp_path / "p.yaml"
    changed.write_text((POLICIES / "seed-pipeline.yaml").read_text().replace("severity: warning", "severity: error"))
    call_command("load_policies", str(changed), stdout=io.StringIO())

    policy = Policy.objects.get(name="research-diffusion")
    assert (policy.version, policy.source, policy.path) == (2, "file", str(changed))
    assert list(PolicyRevision.objects.filter(policy=policy).values_list("version", flat=True)) == [2, 1]


@pytest.mark.django_db
def test_load_policies_can_evaluate_them_at_once(demo: Cluster) -> None:
    out = io.StringIO()

    call_command("load_policies", str(POLICIES), "--evaluate", stdout=out)

    assert out.getvalue().endswith("cluster demo: 12 evaluated, 1 failing\n")
    assert AssertionState.objects.filter(cluster=demo).count() == 12


def test_a_bad_policy_file_changes_nothing_and_names_file_line_and_field(db: None, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text((POLICIES / "seed-pipeline.yaml").read_text().replace("names: [qwen-image-pvc]", "name: x", 1))

    with pytest.raises(CommandError) as raised:
        call_command("load_policies", str(POLICIES), str(bad))

    assert str(raised.value).startswith(f"{bad}:19: spec.assertions[0].scope.name: unknown field 'name'")
    assert not Policy.objects.exists()


@pytest.mark.django_db
def test_evaluation_records_every_assertion_and_omes_reason_for_the_failing_one(demo: Cluster) -> None:
    policies_load_files([POLICIES])

    result = policies_evaluate(demo)

    assert (result.evaluated, result.failing) == (12, 1)
    state = AssertionState.objects.get(cluster=demo, assertion=SEED_ASSERTION)
    assert (state.passing, state.severity, state.kind) == (False, "error", "servedBy")
    assert state.failures[0]["reason"].endswith("diffusion pipeline required by runtime but not specified in model")


@pytest.mark.django_db
def test_the_seed_patch_fixes_the_assertion_and_the_state_names_the_change(demo: Cluster) -> None:
    policies_load_files([POLICIES])
    policies_evaluate(demo)
    before = AssertionState.objects.get(cluster=demo, assertion=SEED_ASSERTION)
    unchanged = AssertionState.objects.get(cluster=demo, assertion="llama-70b-on-team-runtime")

    change = patch_seed_model(demo)
    result = policies_evaluate(demo, causes=[change])

    after = AssertionState.objects.get(pk=before.pk)
    assert result.changed == ["research-diffusion/qwen-image-pvc-on-pipeline-runtime"]
    assert (after.passing, after.failures) == (True, [])
    assert after.since > before.since
    assert after.inventory_version == Cluster.objects.get(pk=demo.pk).inventory_version
    assert [(c["kind"], c["name"], c["action"]) for c in after.causes] == [
        ("ClusterBaseModel", "qwen-image-pvc", "changed")
    ]
    assert AssertionState.objects.get(pk=unchanged.pk).since == unchanged.since


@pytest.mark.django_db
def test_a_pin_reports_drift_from_the_picks_when_the_policy_was_first_evaluated(demo: Cluster, tmp_path: Path) -> None:
    pin = tmp_path / "pin.yaml"
    pin.write_text(
        "apiVersion: compat.ome.io/v1alpha1\nkind: RuntimePolicy\nmetadata: {name: pins}\n"
        "spec:\n  assertions:\n    - {name: qwen-image-pin, assert: pickUnchanged, scope: {names: [qwen-image-pvc]}}\n"
    )
    policies_load_files([pin])
    policies_evaluate(demo)

    patch_seed_model(demo)
    policies_evaluate(demo)

    state = AssertionState.objects.get(cluster=demo, assertion="qwen-image-pin")
    assert not state.passing
    assert {f["subject"] for f in state.failures} >= {"ClusterBaseModel qwen-image-pvc in research"}
    assert (
        "drifted from ClusterServingRuntime srt-qwen-image to ClusterServingRuntime srt-qwen-image-pipeline"
        in (state.failures[0]["message"])
    )


@pytest.mark.django_db
def test_the_policies_page_shows_each_state_and_the_reason(demo: Cluster, client: Client) -> None:
    policies_load_files([POLICIES])
    policies_evaluate(demo)

    page = client.get("/policies/", {"cluster": "demo"})

    assert page.status_code == 200
    html = page.content.decode()
    assert "12 assertions, <strong>1 failing</strong>" in html
    assert 'id="assertion-research-diffusion-qwen-image-pvc-on-pipeline-runtime" class="assertion failing"' in html
    assert "diffusion pipeline required by runtime but not specified in model" in html


@pytest.mark.django_db
def test_the_states_api_has_what_the_page_has(demo: Cluster) -> None:
    policies_load_files([POLICIES])
    policies_evaluate(demo)

    body = APIClient().get("/api/v1/policies/states/", {"cluster": "demo"}).json()

    failing = [item for item in body["results"] if item["state"] == "failing"]
    assert body["count"] == 12
    assert [item["id"] for item in failing] == ["research-diffusion/qwen-image-pvc-on-pipeline-runtime"]
    assert failing[0]["changed_by"]["patches"] == []
    assert "keys" not in failing[0]["failures"][0]


SEED_MODEL_PATCHED = (
    (ROOT / "demo/seed/clusterbasemodel-qwen-image-pvc.yaml")
    .read_text()
    .replace(
        "  storage:\n",
        "  diffusionPipeline:\n    className: QwenImagePipeline\n    transformer:\n      library: diffusers\n  storage:\n",
    )
)


@pytest.mark.django_db
def test_the_check_api_fails_the_seed_policy_on_the_cluster_as_it_is(demo: Cluster) -> None:
    seed_model = (ROOT / "demo/seed/clusterbasemodel-qwen-image-pvc.yaml").read_text()
    body = {"cluster": "demo", "manifests": seed_model, "policies": (POLICIES / "seed-pipeline.yaml").read_text()}

    answer = APIClient().post("/api/v1/policies/check/", body, format="json")

    assert answer.status_code == 200, answer.content
    result = answer.json()
    assert (result["exit_code"], result["failed"]) == (1, True)
    (failure,) = result["sections"][0]["assertions"][0]["failures"]
    assert failure["change"] == "already failing in BASE"


@pytest.mark.django_db
def test_the_check_api_passes_the_seed_policy_with_the_patched_model_and_says_what_it_fixes(demo: Cluster) -> None:
    body = {
        "cluster": "demo", "manifests": SEED_MODEL_PATCHED, "format": "markdown",
        "policies": (POLICIES / "seed-pipeline.yaml").read_text(),
    }  # fmt: skip

    result = APIClient().post("/api/v1/policies/check/", body, format="json").json()

    assert result["exit_code"] == 0
    assert result["sections"][0]["assertions"][0]["fixed"] == ["ClusterBaseModel qwen-image-pvc in research"]
    assert result["rendered"].startswith("### ✅ OME policies")


@pytest.mark.django_db
def test_the_check_api_uses_the_stored_policies_by_default(demo: Cluster) -> None:
    policies_load_files([POLICIES])

    result = (
        APIClient()
        .post("/api/v1/policies/check/", {"cluster": "demo", "manifests": SEED_MODEL_PATCHED}, format="json")
        .json()
    )

    assert result["exit_code"] == 0
    assert len(result["sections"][0]["assertions"]) == 12


@pytest.mark.django_db
def test_a_bad_policy_in_a_check_is_a_400_naming_line_and_field(demo: Cluster) -> None:
    policies = (POLICIES / "seed-pipeline.yaml").read_text().replace("assert: servedBy", "assert: servedby")

    answer = APIClient().post(
        "/api/v1/policies/check/",
        {"cluster": "demo", "manifests": SEED_MODEL_PATCHED, "policies": policies},
        format="json",
    )

    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_policy"
    assert answer.json()["detail"].startswith("policies:16: spec.assertions[0].assert: 'servedby' is not one of")


@pytest.mark.django_db
def test_a_reader_of_one_namespace_sees_its_policies_only_and_how_many_failures_are_others(
    demo: Cluster, django_user_model: Any, settings: Any
) -> None:
    settings.API_ANONYMOUS_READ = False
    policies_load_files([POLICIES])
    policies_evaluate(demo)
    reader = django_user_model.objects.create_user("team-b-reader")
    grant(reader, "viewer", cluster="demo", namespace="team-b")
    client = APIClient()
    client.force_login(reader)

    body = client.get("/api/v1/policies/states/", {"cluster": "demo"}).json()

    # The seed assertion is research's (scope namespaces [research]): not team-b's to see.
    assert {item["policy"] for item in body["results"]} == {"team-b-fp8"}
    assert all((item["failures"], item["failures_hidden"]) == ([], 0) for item in body["results"])


@pytest.mark.django_db
def test_the_admin_validates_a_policy_and_versions_each_change(admin_client: Client) -> None:
    text = (POLICIES / "seed-pipeline.yaml").read_text()
    form = {"name": "research-diffusion", "text": text.replace("assert: servedBy", "assert: servedby"), "enabled": "on"}

    refused = admin_client.post("/admin/policies/policy/add/", form)
    form["text"] = text
    admin_client.post("/admin/policies/policy/add/", form)
    policy = Policy.objects.get(name="research-diffusion")
    form["text"] = text.replace("severity: warning", "severity: error")
    admin_client.post(f"/admin/policies/policy/{policy.pk}/change/", form)

    assert "text:16: spec.assertions[0].assert: &#x27;servedby&#x27; is not one of" in refused.content.decode()
    policy.refresh_from_db()
    assert (policy.version, policy.source) == (2, "admin")
    assert PolicyRevision.objects.filter(policy=policy).count() == 2
