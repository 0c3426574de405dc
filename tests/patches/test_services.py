"""patches.services: plan, preview and apply, against a manifest snapshot and the fake API server
through the real kubernetes client."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

import matching
from access.scope import SYSTEM
from inventory.models import Cluster, Resource
from inventory.services import manifests_load
from inventory.signals import inventory_changed
from patches.errors import AppendOnlyError, PatchInvalid, PatchTargetMissing, UploadInvalid
from patches.models import PatchAttempt
from patches.services import (
    MAX_UPLOAD_BYTES,
    kubectl_command,
    patch_apply,
    patch_check,
    patch_plan,
    patch_preview,
    pipeline_from_upload,
    version_of,
)
from tests.fakes.kube_api import FakeKubeAPI
from tests.patches.seed import MODEL, PIPELINE, RUNTIME, SEED_PATCH

pytestmark = pytest.mark.django_db

SEED_KUBECTL = (
    "kubectl patch clusterbasemodel qwen-image-pvc --type merge -p "
    """'{"spec":{"diffusionPipeline":{"className":"QwenImagePipeline","transformer":{"library":"diffusers"}}}}'"""
)


def stored(cluster: Cluster, name: str = "qwen-image-pvc") -> Resource:
    return Resource.objects.get(cluster=cluster, name=name)


def patches_sent(fake: FakeKubeAPI) -> list[Any]:
    return [request for request in fake.requests if request.method == "PATCH"]


def apply(cluster: Cluster, user: Any, patch: Any = SEED_PATCH, version: str | None = None, model: Any = MODEL) -> Any:
    if version is None:
        version = version_of(cluster, stored(cluster))
    return patch_apply(cluster, model=model, patch=patch, resource_version=version, user=user)


# ---- plan ------------------------------------------------------------------------------------


def test_the_plan_for_the_seed_case_is_exactly_the_pipeline_the_runtime_requires(snapshot: Cluster) -> None:
    plan = patch_plan(snapshot, MODEL, RUNTIME, scope=SYSTEM)

    assert plan.patch == {
        "spec": {"diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}}
    }
    assert json.dumps(plan.patch, separators=(",", ":")) == (
        '{"spec":{"diffusionPipeline":{"className":"QwenImagePipeline","transformer":{"library":"diffusers"}}}}'
    )
    assert (plan.entry, plan.blocked) == (0, ())


def test_the_plan_takes_ids_bare_names_and_keys(snapshot: Cluster) -> None:
    model, runtime = stored(snapshot), stored(snapshot, "srt-qwen-image-pipeline")

    by_id = patch_plan(snapshot, model.pk, str(runtime.pk), scope=SYSTEM)
    by_name = patch_plan(
        snapshot, "qwen-image-pvc", {"kind": "ClusterServingRuntime", "name": "srt-qwen-image-pipeline"}, scope=SYSTEM
    )

    assert by_id.patch == by_name.patch == SEED_PATCH


def test_the_plan_is_empty_when_the_model_already_passes_the_runtime(snapshot: Cluster) -> None:
    plan = patch_plan(snapshot, MODEL, "ClusterServingRuntime/srt-qwen-image", scope=SYSTEM)

    assert (plan.patch, plan.entry) == (None, 0)


def test_an_unknown_model_or_runtime_is_named_in_the_error(snapshot: Cluster) -> None:
    with pytest.raises(PatchTargetMissing) as missing:
        patch_plan(snapshot, "ClusterBaseModel/nope", RUNTIME, scope=SYSTEM)
    with pytest.raises(PatchInvalid) as wrong_kind:
        patch_plan(snapshot, MODEL, "ClusterBaseModel/qwen-image", scope=SYSTEM)

    assert missing.value.field == "model"
    assert wrong_kind.value.field == "runtime"


# ---- preview ---------------------------------------------------------------------------------


def test_the_preview_shows_the_patch_the_objects_before_and_after_and_the_kubectl_command(snapshot: Cluster) -> None:
    preview = patch_preview(snapshot, model=MODEL, runtime=RUNTIME, scope=SYSTEM).to_dict()

    assert preview["patch"] == SEED_PATCH
    assert preview["kubectl"] == SEED_KUBECTL
    assert "diffusionPipeline" not in preview["before"]["spec"]
    assert preview["after"]["spec"]["diffusionPipeline"] == PIPELINE
    assert {k: v for k, v in preview["after"]["spec"].items() if k != "diffusionPipeline"} == preview["before"]["spec"]
    assert preview["resource_version"] == version_of(snapshot, stored(snapshot))
    assert preview["plan"] == {"behaviour": matching.NEWEST_BEHAVIOUR, "patch": SEED_PATCH, "entry": 0, "blocked": []}
    assert preview["already_applied"] is False


def test_the_preview_gives_the_matrix_diff_the_pipeline_runtime_is_won_and_becomes_omes_pick(snapshot: Cluster) -> None:
    diff = patch_preview(snapshot, model=MODEL, runtime=RUNTIME, scope=SYSTEM).matrix_diff

    assert diff is not None
    [row] = [row for row in diff["rows"] if row["namespace"] == ""]
    pipeline_runtime = {"kind": "ClusterServingRuntime", "namespace": "", "name": "srt-qwen-image-pipeline"}
    assert row["model"] == {"kind": "ClusterBaseModel", "namespace": "", "name": "qwen-image-pvc"}
    assert row["gained"] == [pipeline_runtime]
    assert row["lost"] == []
    assert row["pick_changed"] is True
    assert row["old_selected"]["name"] == "srt-qwen-image"
    assert row["new_selected"] == pipeline_runtime


def test_the_preview_of_a_manifest_snapshot_says_the_files_are_not_changed(snapshot: Cluster) -> None:
    preview = patch_preview(snapshot, model=MODEL, runtime=RUNTIME, scope=SYSTEM)

    assert preview.target == "inventory"
    assert any(
        "not to the manifest files" in note and "Reloading the folder will revert it" in note for note in preview.notes
    )


def test_the_kubectl_command_of_a_base_model_names_its_namespace(snapshot: Cluster) -> None:
    preview = patch_preview(snapshot, model="BaseModel/team-a/qwen-image-team", pipeline=PIPELINE, scope=SYSTEM)

    assert preview.kubectl == (
        "kubectl patch basemodel qwen-image-team -n team-a --type merge -p "
        """'{"spec":{"diffusionPipeline":{"className":"QwenImagePipeline","transformer":{"library":"diffusers"}}}}'"""
    )


@pytest.mark.parametrize(
    ("namespace", "name", "class_name"),
    [
        ("team-a", "x'; rm -rf ~; echo '", "QwenImagePipeline"),
        ("$(reboot)", "a b\nc", "It's`id`"),
        ("-n", "--all", "P"),
    ],
    ids=["quote-in-name", "shell-syntax", "flag-like"],
)
def test_the_kubectl_command_quotes_hostile_names_so_the_shell_sees_them_verbatim(
    namespace: str, name: str, class_name: str
) -> None:
    patch = {"spec": {"diffusionPipeline": {"className": class_name}}}

    words = shlex.split(kubectl_command("BaseModel", namespace, name, patch))

    assert words[:2] == ["kubectl", "patch"]
    assert name in words or f"basemodel/{name}" in words
    assert namespace in words or f"--namespace={namespace}" in words
    assert json.loads(words[-1]) == patch
    assert not any(word.startswith("-") and word in (name, namespace) for word in words)


def test_the_preview_of_an_explicit_pipeline_names_the_bad_field_without_the_patch_prefix(snapshot: Cluster) -> None:
    with pytest.raises(PatchInvalid) as error:
        patch_preview(snapshot, model=MODEL, pipeline={"className": 7}, scope=SYSTEM)

    assert error.value.field == "diffusionPipeline.className"


def test_the_preview_of_a_model_that_already_has_the_values_says_so(snapshot: Cluster) -> None:
    pipeline = stored(snapshot, "qwen-image").obj["spec"]["diffusionPipeline"]

    preview = patch_preview(snapshot, model="qwen-image", pipeline=pipeline, scope=SYSTEM)

    assert preview.already_applied is True
    assert preview.matrix_diff is not None
    assert preview.matrix_diff["rows"] == []


# ---- model_index.json uploads ------------------------------------------------------------------


STABLE_DIFFUSION_INDEX = {
    "_class_name": "StableDiffusionPipeline",
    "_diffusers_version": "0.6.0",
    "feature_extractor": ["transformers", "CLIPImageProcessor"],
    "safety_checker": ["stable_diffusion", "StableDiffusionSafetyChecker"],
    "scheduler": ["diffusers", "PNDMScheduler"],
    "text_encoder": ["transformers", "CLIPTextModel"],
    "tokenizer": ["transformers", "CLIPTokenizer"],
    "unet": ["diffusers", "UNet2DConditionModel"],
    "vae": ["diffusers", "AutoencoderKL"],
}


def test_a_model_index_upload_becomes_the_pipeline_omes_agent_would_record() -> None:
    pipeline = pipeline_from_upload(json.dumps(STABLE_DIFFUSION_INDEX).encode())

    assert pipeline["className"] == "StableDiffusionPipeline"
    assert pipeline["transformer"] == {"library": "diffusers", "type": "UNet2DConditionModel"}
    assert "safety_checker" in pipeline["additionalComponents"]  # type: ignore[operator]


@pytest.mark.parametrize(
    ("upload", "message"),
    [
        (" " * (MAX_UPLOAD_BYTES + 1), "larger than 256 KiB"),
        ("é" * (MAX_UPLOAD_BYTES // 2 + 1), "larger than 256 KiB"),
        ('{"_class_name": "P",', "not valid JSON: Expecting property name enclosed in double quotes at line 1"),
        ('{"_class_name": NaN}', "NaN is not allowed"),
        ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
        ("[1, 2]", "must hold a JSON object, not list"),
        (b"\xff\xfe{}", "not UTF-8 text"),
        ('{"model_type": "sd", "requires_safety_checker": true}', "did not contain diffusion pipeline metadata"),
        ('{"unet": ["diffusers", "UNet2DConditionModel"]}', "has no _class_name"),
        ('{"_class_name": ""}', "has no _class_name"),
        (json.dumps({"_class_name": "P" * 200_000}), "diffusionPipeline.className would be 200000 characters long"),
        (
            json.dumps({"_class_name": "P", "vae": ["diffusers", "V" * 1000]}),
            "diffusionPipeline.vae.type would be 1000",
        ),
        (json.dumps({"_class_name": "P", "x" * 300: ["a", "b"]}), "a component name of 300 characters"),
    ],
    ids=[
        "too-large",
        "too-large-in-bytes",
        "truncated",
        "nan",
        "deeply-nested",
        "list",
        "not-utf8",
        "no-pipeline",
        "no-class-name",
        "empty-class-name",
        "200-KB-class-name",
        "long-type",
        "long-component-name",
    ],
)
def test_a_bad_model_index_upload_is_refused_with_a_clear_error(upload: str | bytes, message: str) -> None:
    with pytest.raises(UploadInvalid) as error:
        pipeline_from_upload(upload)

    assert message in str(error.value)
    assert error.value.field == "model_index"


# ---- what may be patched ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"spec": {"modelFormat": {"name": "x"}, "diffusionPipeline": PIPELINE}}, "patch.spec.modelFormat"),
        ({"metadata": {"labels": {"a": "b"}}, "spec": {"diffusionPipeline": PIPELINE}}, "patch.metadata"),
        ({"status": {}}, "patch.status"),
        ({"spec": {}}, "patch.spec.diffusionPipeline"),
        ({"spec": None}, "patch.spec"),
        ({"spec": {"diffusionPipeline": "QwenImagePipeline"}}, "patch.spec.diffusionPipeline"),
        ({"spec": {"diffusionPipeline": {"classname": "P"}}}, "patch.spec.diffusionPipeline.classname"),
        ({"spec": {"diffusionPipeline": {"vae": {"libary": "d"}}}}, "patch.spec.diffusionPipeline.vae.libary"),
        ([{"op": "replace"}], "patch"),
    ],
    ids=[
        "other-spec-field",
        "metadata",
        "status",
        "no-pipeline",
        "spec-null",
        "pipeline-not-object",
        "typo",
        "component-typo",
        "json-patch",
    ],
)
def test_only_the_diffusion_pipeline_may_be_patched(patch: Any, field: str) -> None:
    with pytest.raises(PatchInvalid) as error:
        patch_check(patch)

    assert error.value.field == field


def test_removing_the_pipeline_with_null_is_allowed() -> None:
    patch_check({"spec": {"diffusionPipeline": None}})
    patch_check({"spec": {"diffusionPipeline": {"vae": None, "additionalComponents": {"x": None}}}})


# ---- apply to a live cluster -------------------------------------------------------------------


def test_apply_sends_a_merge_patch_with_the_resource_version_and_stores_the_returned_object(
    live: Cluster, fake: FakeKubeAPI, applier: Any
) -> None:
    seen = stored(live).resource_version

    outcome = apply(live, applier, version=seen)

    [request] = patches_sent(fake)
    assert request.headers["content-type"] == "application/merge-patch+json"
    assert request.path == "/apis/ome.io/v1beta1/clusterbasemodels/qwen-image-pvc"
    assert request.body == {"spec": {"diffusionPipeline": PIPELINE}, "metadata": {"resourceVersion": seen}}
    on_server = fake.get("ClusterBaseModel", "qwen-image-pvc")
    assert on_server is not None
    assert on_server["spec"]["diffusionPipeline"] == PIPELINE
    assert outcome.result == "applied"
    assert outcome.ok
    assert outcome.resource_version == on_server["metadata"]["resourceVersion"] != seen
    assert outcome.obj == on_server
    model = stored(live)
    assert model.obj["spec"]["diffusionPipeline"] == PIPELINE
    assert (model.resource_version, model.pipeline_class) == (outcome.resource_version, "QwenImagePipeline")


def test_apply_records_who_what_and_the_result(live: Cluster, applier: Any) -> None:
    seen = stored(live).resource_version

    outcome = apply(live, applier, version=seen)

    attempt = PatchAttempt.objects.get()
    assert attempt == outcome.attempt
    assert (attempt.user, attempt.username, attempt.cluster_name) == (applier, "ada", "live")
    assert (attempt.model_kind, attempt.model_namespace, attempt.model_name) == (
        "ClusterBaseModel",
        "",
        "qwen-image-pvc",
    )
    assert (attempt.patch, attempt.resource_version) == (SEED_PATCH, seen)
    assert (attempt.result, attempt.target, attempt.new_resource_version) == (
        "applied",
        "cluster",
        outcome.resource_version,
    )
    assert attempt.created_at is not None


def test_apply_announces_the_change_so_the_matrix_updates_through_the_normal_path(
    live: Cluster, applier: Any, django_capture_on_commit_callbacks: Any
) -> None:
    announced: list[Any] = []

    def receive(sender: Any, cluster_id: int, changes: list[Any], **kwargs: Any) -> None:
        announced.extend((cluster_id, change.to_dict()) for change in changes)

    inventory_changed.connect(receive)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            apply(live, applier)
    finally:
        inventory_changed.disconnect(receive)

    [(cluster_id, change)] = announced
    assert cluster_id == live.pk
    assert (change["kind"], change["name"], change["action"]) == ("ClusterBaseModel", "qwen-image-pvc", "changed")
    assert [name for name in change["fields"] if name.startswith("spec.")] == ["spec.diffusionPipeline"]


def test_a_model_that_changed_on_the_server_is_a_conflict_and_nothing_is_overwritten(
    live: Cluster, fake: FakeKubeAPI, applier: Any
) -> None:
    seen = stored(live).resource_version
    fake.patch("ClusterBaseModel", "qwen-image-pvc", {"spec": {"diffusionPipeline": {"className": "Other"}}})

    outcome = apply(live, applier, version=seen)

    on_server = fake.get("ClusterBaseModel", "qwen-image-pvc")
    assert on_server is not None
    assert on_server["spec"]["diffusionPipeline"] == {"className": "Other"}
    assert outcome.result == "conflict"
    assert outcome.http_status == 409
    assert "changed on the cluster" in outcome.attempt.detail
    assert "nothing was overwritten" in outcome.attempt.detail
    assert PatchAttempt.objects.get().result == "conflict"
    # The inventory now holds the server's object, so the next preview shows it.
    assert outcome.resource_version == on_server["metadata"]["resourceVersion"] == stored(live).resource_version


def test_a_patch_sent_twice_is_reported_already_applied_without_sending_anything(
    live: Cluster, fake: FakeKubeAPI, applier: Any
) -> None:
    seen = stored(live).resource_version
    first = apply(live, applier, version=seen)

    second = apply(live, applier, version=seen)

    assert (first.result, second.result) == ("applied", "already_applied")
    assert len(patches_sent(fake)) == 1
    assert second.ok
    assert second.resource_version == first.resource_version
    assert list(PatchAttempt.objects.order_by("pk").values_list("result", flat=True)) == ["applied", "already_applied"]


def test_a_different_patch_sent_with_the_old_resource_version_is_a_conflict(
    live: Cluster, fake: FakeKubeAPI, applier: Any
) -> None:
    seen = stored(live).resource_version
    apply(live, applier, version=seen)
    other = {"spec": {"diffusionPipeline": {"vae": {"library": "diffusers"}}}}

    outcome = apply(live, applier, other, version=seen)

    assert outcome.result == "conflict"
    on_server = fake.get("ClusterBaseModel", "qwen-image-pvc")
    assert on_server is not None
    assert "vae" not in on_server["spec"]["diffusionPipeline"]


@pytest.mark.parametrize("status", [401, 403])
def test_refused_credentials_are_reported_plainly_and_recorded(
    live: Cluster, fake: FakeKubeAPI, applier: Any, status: int
) -> None:
    fake.fail_next(status=status, verbs="patch", message="no")

    outcome = apply(live, applier)

    assert outcome.result == "unauthorized"
    assert outcome.http_status == 502
    assert outcome.attempt.detail.startswith(f"the cluster refused the credentials ({status})")
    assert PatchAttempt.objects.get().result == "unauthorized"
    assert "diffusionPipeline" not in stored(live).obj["spec"]


def test_a_model_deleted_on_the_server_is_reported_not_found(live: Cluster, fake: FakeKubeAPI, applier: Any) -> None:
    fake.delete("ClusterBaseModel", "qwen-image-pvc")

    outcome = apply(live, applier)

    assert (outcome.result, outcome.http_status) == ("not_found", 404)
    assert "is not on the cluster" in outcome.attempt.detail


def test_an_unavailable_cluster_is_reported_and_recorded(live: Cluster, fake: FakeKubeAPI, applier: Any) -> None:
    fake.fail_next(status=500, verbs="patch", message="etcd is down")

    outcome = apply(live, applier)

    assert (outcome.result, outcome.http_status) == ("unavailable", 503)
    # A fixed text with the status; the server's own message goes to the log only.
    assert "API server error (500)" in outcome.attempt.detail
    assert "etcd is down" not in outcome.attempt.detail
    assert PatchAttempt.objects.get().result == "unavailable"


def test_an_unreadable_kubeconfig_is_an_error_outcome_not_an_exception(
    live: Cluster, applier: Any, tmp_path: Path
) -> None:
    live.kubeconfig = str(tmp_path / "missing")
    live.save()

    outcome = apply(live, applier)

    assert (outcome.result, outcome.http_status) == ("error", 502)
    assert outcome.attempt.target == ""


def test_a_user_without_the_permission_is_denied_recorded_and_nothing_is_sent(
    live: Cluster, fake: FakeKubeAPI, reader: Any
) -> None:
    outcome = apply(live, reader)

    assert (outcome.result, outcome.http_status) == ("denied", 403)
    assert patches_sent(fake) == []
    attempt = PatchAttempt.objects.get()
    assert (attempt.username, attempt.result, attempt.model_kind, attempt.model_name) == (
        "bob",
        "denied",
        "ClusterBaseModel",
        "qwen-image-pvc",
    )


def test_a_non_pipeline_field_is_rejected_recorded_and_not_sent(live: Cluster, fake: FakeKubeAPI, applier: Any) -> None:
    outcome = apply(live, applier, {"spec": {"diffusionPipeline": PIPELINE, "disabled": True}})

    assert (outcome.result, outcome.http_status, outcome.field) == ("rejected", 400, "patch.spec.disabled")
    assert patches_sent(fake) == []
    assert PatchAttempt.objects.get().result == "rejected"


def test_a_pipeline_that_ome_could_not_read_is_rejected_naming_the_field(
    live: Cluster, fake: FakeKubeAPI, applier: Any
) -> None:
    outcome = apply(live, applier, {"spec": {"diffusionPipeline": {"transformer": {"library": 3}}}})

    assert (outcome.result, outcome.field) == ("rejected", "patch.spec.diffusionPipeline.transformer.library")
    assert patches_sent(fake) == []


def test_an_empty_resource_version_is_rejected(live: Cluster, fake: FakeKubeAPI, applier: Any) -> None:
    outcome = apply(live, applier, version="")

    assert (outcome.result, outcome.field) == ("rejected", "resource_version")
    assert patches_sent(fake) == []


# ---- apply to a manifest snapshot --------------------------------------------------------------


def test_apply_to_a_manifest_snapshot_changes_the_stored_object_not_the_files_and_says_so(
    snapshot: Cluster, applier: Any
) -> None:
    seed_file = Path(snapshot.manifests[0]) / "clusterbasemodel-qwen-image-pvc.yaml"
    text = seed_file.read_text()
    seen = version_of(snapshot, stored(snapshot))

    outcome = apply(snapshot, applier, version=seen)

    assert (outcome.result, outcome.attempt.target) == ("applied", "inventory")
    assert "stored copy" in outcome.attempt.detail
    assert "not to the manifest files" in outcome.attempt.detail
    assert "Reloading the folder will revert it" in outcome.attempt.detail
    assert stored(snapshot).obj["spec"]["diffusionPipeline"] == PIPELINE
    assert outcome.resource_version == version_of(snapshot, stored(snapshot)) != seen
    assert seed_file.read_text() == text


def test_reloading_the_folder_reverts_a_patch_of_a_manifest_snapshot(snapshot: Cluster, applier: Any) -> None:
    apply(snapshot, applier)

    manifests_load(snapshot, snapshot.manifests, prune=True)

    assert "diffusionPipeline" not in stored(snapshot).obj["spec"]


def test_a_manifest_snapshot_model_that_changed_since_the_preview_is_a_conflict(
    snapshot: Cluster, applier: Any
) -> None:
    seen = version_of(snapshot, stored(snapshot))
    apply(snapshot, applier, version=seen)
    other = {"spec": {"diffusionPipeline": {"vae": {"library": "diffusers"}}}}

    outcome = apply(snapshot, applier, other, version=seen)

    assert outcome.result == "conflict"
    assert "vae" not in stored(snapshot).obj["spec"]["diffusionPipeline"]


def test_an_unknown_model_is_recorded_as_not_found(snapshot: Cluster, applier: Any) -> None:
    outcome = apply(snapshot, applier, version="content-x", model="ClusterBaseModel/nope")

    assert (outcome.result, outcome.field) == ("not_found", "model")
    assert PatchAttempt.objects.get().model_name == "ClusterBaseModel/nope"


# ---- the audit log is append-only ---------------------------------------------------------------


def test_an_audit_row_cannot_be_changed_or_deleted(snapshot: Cluster, applier: Any) -> None:
    attempt = apply(snapshot, applier).attempt

    attempt.result = "denied"
    with pytest.raises(AppendOnlyError):
        attempt.save()
    with pytest.raises(AppendOnlyError):
        attempt.delete()
    with pytest.raises(AppendOnlyError):
        PatchAttempt.objects.filter(pk=attempt.pk).update(result="denied")
    with pytest.raises(AppendOnlyError):
        PatchAttempt.objects.all().delete()

    assert PatchAttempt.objects.get().result == "applied"


def test_deleting_a_user_keeps_their_audit_rows(snapshot: Cluster, applier: Any) -> None:
    apply(snapshot, applier)

    applier.delete()

    attempt = PatchAttempt.objects.get()
    assert (attempt.user, attempt.username) == (None, "ada")
