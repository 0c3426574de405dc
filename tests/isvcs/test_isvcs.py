"""InferenceService verdicts over the demo cluster (its namespaces/ cases) and small manifests."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import matching
from access.scope import SYSTEM
from inventory.models import Cluster, Resource
from inventory.parsed import load_inventory
from inventory.sync import event_apply
from isvcs.explain import group_of
from isvcs.models import InferenceServiceVerdict
from isvcs.services import (
    FirstVerdict,
    IsvcVerdict,
    evaluate_isvcs,
    isvc_at_risk,
    isvc_verdicts,
    isvc_verdicts_refresh,
)
from matching import ADVISORY, BLOCKED, NAMED, SELECTED, SILENT, WAITING
from tests.support.inventory import inventory_from_objects
from tests.support.manifests import llama_model as model
from whatif.parse import normalise

SEED_PIPELINE = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}


def by_name(verdicts: list[IsvcVerdict]) -> dict[str, IsvcVerdict]:
    return {f"{verdict.namespace}/{verdict.name}": verdict for verdict in verdicts}


def stored(demo: Cluster, kind: str, namespace: str, name: str) -> dict[str, Any]:
    return copy.deepcopy(Resource.objects.get(cluster=demo, kind=kind, namespace=namespace, name=name).obj)


def patch_pvc_pipeline(demo: Cluster) -> None:
    obj = stored(demo, "ClusterBaseModel", "", "qwen-image-pvc")
    obj["spec"]["diffusionPipeline"] = SEED_PIPELINE
    event_apply(demo, "MODIFIED", obj)


# ------------------------------------------------------------------------------------------
# The demo cluster


@pytest.mark.django_db
def test_the_demo_services_get_the_verdicts_of_the_demo_readme(demo: Cluster) -> None:
    verdicts = by_name(isvc_verdicts(demo, scope=SYSTEM))

    summary = {name: (v.verdict, v.runtime[2] if v.runtime else None, v.failure) for name, v in verdicts.items()}
    assert summary == {
        "research/command-r-plus": (BLOCKED, None, "model-invalid"),
        "research/llama-8b-sft": (BLOCKED, None, "no-runtime"),
        "research/qwen-image": (SELECTED, "srt-qwen-image", None),
        "research/qwen-image-pipeline": (ADVISORY, "srt-qwen-image-pipeline", None),
        "team-a/llama-70b-chat": (SELECTED, "team-a-sglang-llama", None),
        "team-a/qwen3-8b": (NAMED, "srt-qwen3-8b", None),
        "team-a/r1-distill-70b": (SELECTED, "team-a-sglang-llama", None),
        "team-b/llama-8b": (BLOCKED, None, "no-runtime"),
        "team-b/qwen3-32b": (NAMED, "vllm-qwen3-manual", None),
        "team-b/qwen3-moe-fp8": (SELECTED, "sglang-qwen3-moe-fp8-h100", None),
    }
    assert verdicts["research/command-r-plus"].error == (
        "invalid model specification: modelFormat.name: model format name is required"
    )
    assert verdicts["research/llama-8b-sft"].error.startswith(  # type: ignore[union-attr]
        "no runtime found to support model safetensors with format safetensors in namespace research. "
        "Checked 204 runtimes (0 namespace-scoped, 204 cluster-scoped). Excluded runtimes: "
    )
    llama_8b = verdicts["team-b/llama-8b"]
    assert "vllm-llama-legacy (runtime is disabled)" in (llama_8b.error or "")
    assert llama_8b.fix is not None
    assert llama_8b.fix.startswith("set autoSelect: true on one of the runtimes")


@pytest.mark.django_db
def test_the_seed_service_is_used_anyway_by_newer_ome_and_blocked_by_older_ome(demo: Cluster) -> None:
    verdict = by_name(isvc_verdicts(demo, scope=SYSTEM))["research/qwen-image-pipeline"]

    error = (
        "runtime srt-qwen-image-pipeline does not support model diffusers: model format "
        "'mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0' not in supported formats: "
        "diffusion pipeline required by runtime but not specified in model"
    )
    assert verdict.label == "used anyway (advisory)"
    assert verdict.error == error
    assert verdict.event == (
        "RuntimeCompatibilityAdvisory",
        f"Runtime srt-qwen-image-pipeline does not declare support for model qwen-image-pvc ({error}); "
        "proceeding because the runtime was named explicitly",
    )
    assert verdict.behaviour == matching.NEWEST_BEHAVIOUR
    inventory = load_inventory(demo)
    service = inventory.isvcs[("InferenceService", "research", "qwen-image-pipeline")]
    older = matching.evaluate_isvc(inventory.grid, service, inventory.invalid, behaviour="17b77eda")
    assert (older.verdict, older.failure, older.error, older.behaviour) == (BLOCKED, "incompatible", error, "17b77eda")
    assert older.event == (
        "RuntimeValidationError",
        f"Runtime srt-qwen-image-pipeline does not support model qwen-image-pvc: {error}",
    )
    assert verdict.fix == (
        'patch the model\'s diffusionPipeline ({"spec":{"diffusionPipeline":{"className":"QwenImagePipeline",'
        '"transformer":{"library":"diffusers"}}}}) so that srt-qwen-image-pipeline matches it'
    )


@pytest.mark.django_db
def test_a_model_patch_after_the_first_verdict_flags_the_service_ome_will_not_recheck(demo: Cluster) -> None:
    isvc_verdicts_refresh(demo)
    first = InferenceServiceVerdict.objects.get(cluster=demo, namespace="research", name="qwen-image")
    assert (first.first_verdict, first.first_runtime) == (SELECTED, ["ClusterServingRuntime", "", "srt-qwen-image"])

    patch_pvc_pipeline(demo)
    verdicts = by_name(isvc_verdicts_refresh(demo))

    auto = verdicts["research/qwen-image"]
    assert auto.runtime == ("ClusterServingRuntime", "", "srt-qwen-image-pipeline")
    assert auto.first is not None
    assert auto.first.runtime == ("ClusterServingRuntime", "", "srt-qwen-image")
    assert (auto.drift, auto.drift_basis) == ("would-pick-differently", "first-seen")
    assert auto.fix is not None
    assert auto.fix.startswith("re-apply the InferenceService to move it to srt-qwen-image-pipeline")
    named = verdicts["research/qwen-image-pipeline"]
    assert (named.verdict, named.first.verdict if named.first else None, named.drift) == (NAMED, ADVISORY, None)
    record = InferenceServiceVerdict.objects.get(cluster=demo, namespace="research", name="qwen-image")
    assert record.first_runtime == ["ClusterServingRuntime", "", "srt-qwen-image"]
    assert record.current_runtime == ["ClusterServingRuntime", "", "srt-qwen-image-pipeline"]


@pytest.mark.django_db
def test_a_rejected_service_that_would_now_succeed_is_flagged(demo: Cluster) -> None:
    isvc_verdicts_refresh(demo)
    runtime = stored(demo, "ServingRuntime", "team-a", "team-a-sglang-llama")
    runtime["metadata"] = {"name": "sglang-llama-4-56", "namespace": "research"}
    runtime["spec"]["supportedModelFormats"][0]["modelFramework"]["version"] = "4.56.1"
    event_apply(demo, "ADDED", runtime)

    verdict = by_name(isvc_verdicts(demo, scope=SYSTEM))["research/llama-8b-sft"]

    assert verdict.verdict == SELECTED
    assert (verdict.drift, verdict.drift_basis) == ("would-now-succeed", "first-seen")
    assert verdict.fix == "re-apply the InferenceService: OME does not re-check it when a model changes"


@pytest.mark.django_db
def test_changing_the_service_itself_restarts_its_first_verdict(demo: Cluster) -> None:
    isvc_verdicts_refresh(demo)
    patch_pvc_pipeline(demo)
    isvc = stored(demo, "InferenceService", "research", "qwen-image")
    isvc["metadata"]["annotations"] = {"touched": "1"}
    event_apply(demo, "MODIFIED", isvc)

    verdict = by_name(isvc_verdicts_refresh(demo))["research/qwen-image"]

    assert verdict.first is not None
    assert verdict.first.runtime == ("ClusterServingRuntime", "", "srt-qwen-image-pipeline")
    assert verdict.drift is None


@pytest.mark.django_db
def test_records_follow_the_services_uid_and_existence(demo: Cluster) -> None:
    isvc_verdicts_refresh(demo)
    assert InferenceServiceVerdict.objects.filter(cluster=demo).count() == 10
    isvc = stored(demo, "InferenceService", "team-a", "qwen3-8b")
    event_apply(demo, "DELETED", isvc)
    isvc["metadata"]["uid"] = "new-uid"
    event_apply(demo, "ADDED", isvc)
    event_apply(demo, "DELETED", stored(demo, "InferenceService", "team-b", "qwen3-32b"))

    isvc_verdicts_refresh(demo)

    records = InferenceServiceVerdict.objects.filter(cluster=demo)
    assert records.count() == 9
    assert records.get(namespace="team-a", name="qwen3-8b").uid == "new-uid"


@pytest.mark.django_db
def test_status_conditions_take_precedence_over_the_first_verdict(demo: Cluster) -> None:
    isvc = stored(demo, "InferenceService", "team-a", "llama-70b-chat")
    isvc["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    event_apply(demo, "MODIFIED", isvc)
    rejected = stored(demo, "InferenceService", "research", "qwen-image")
    rejected["status"] = {"conditions": [{"type": "RuntimeReady", "status": "False", "reason": "RuntimeNotFound"}]}
    event_apply(demo, "MODIFIED", rejected)
    runtime = stored(demo, "ServingRuntime", "team-a", "team-a-sglang-llama")
    runtime["spec"]["disabled"] = True
    event_apply(demo, "MODIFIED", runtime)
    for name in ("srt-deepseek-r1-distill-llama-70b", "vllm-llama-3-3-70b-instruct"):
        cluster_runtime = stored(demo, "ClusterServingRuntime", "", name)
        cluster_runtime["spec"]["disabled"] = True
        event_apply(demo, "MODIFIED", cluster_runtime)

    verdicts = by_name(isvc_verdicts(demo, scope=SYSTEM))

    running = verdicts["team-a/llama-70b-chat"]
    assert (running.verdict, running.drift, running.drift_basis) == (BLOCKED, "no-longer-matches", "status")
    assert running.observed.running
    came_back = verdicts["research/qwen-image"]
    assert (came_back.drift, came_back.drift_basis) == ("would-now-succeed", "status")
    assert came_back.to_dict()["observed"] == {
        "ready": None,
        "runtime_ready": "False",
        "reason": "RuntimeNotFound",
        "message": None,
    }


# ------------------------------------------------------------------------------------------
# Small manifests


def runtime(name: str, *, namespace: str | None = None, auto: bool = True, **spec: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    entry = {
        "modelFormat": {"name": "safetensors", "version": "1.0.0"},
        "modelFramework": {"name": "transformers", "version": "4.51.0"},
        "modelArchitecture": "LlamaForCausalLM",
        "autoSelect": auto,
    }
    return {
        "kind": "ServingRuntime" if namespace else "ClusterServingRuntime",
        "metadata": metadata,
        "spec": {"supportedModelFormats": [entry], **spec},
    }


def isvc(
    name: str = "svc",
    *,
    model_ref: dict[str, Any] | None = None,
    runtime_ref: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
    status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"engine": {"minReplicas": 1}}
    if model_ref is not None:
        spec["model"] = model_ref
    if runtime_ref is not None:
        spec["runtime"] = runtime_ref
    obj: dict[str, Any] = {"kind": "InferenceService", "metadata": {"name": name, "namespace": "team"}, "spec": spec}
    if annotations:
        obj["metadata"]["annotations"] = annotations
    if status:
        obj["status"] = status
    return obj


def evaluate(
    *objects: dict[str, Any],
    first: dict[tuple[str, str, str], FirstVerdict] | None = None,
    behaviour: str = matching.NEWEST_BEHAVIOUR,
) -> IsvcVerdict:
    inventory = inventory_from_objects(objects, behaviour=behaviour)
    raw = {}
    for obj in objects:
        if obj["kind"] == "InferenceService":
            normalised = normalise(obj)
            raw[("InferenceService", "team", normalised["metadata"]["name"])] = normalised
    (verdict,) = evaluate_isvcs(inventory, raw, first)
    return verdict


# v1.3: ome-docs src/lib/content/guides/troubleshoot/troubleshoot-an-inferenceservice.md, "An
# InferenceService that serves a BaseModel gets no pods" (the kind defaults to ClusterBaseModel;
# the webhook admits it; no event or condition; the log says `Failed to get referenced
# ClusterBaseModel`), and concepts/models/base-models.md (a BaseModel shadows a same-named
# ClusterBaseModel). The strict-kind proposal (078c923f, 485b7933's reconciliation.go) blocks.
STRICT = "078c923f"


def test_a_base_model_referenced_with_the_default_kind_is_silently_not_deployed_by_v13() -> None:
    verdict = evaluate(model("llama", namespace="team"), runtime("rt"), isvc(model_ref={"name": "llama"}))

    assert (verdict.verdict, verdict.failure, verdict.event) == (SILENT, "wrong-kind", None)
    assert verdict.error == "Failed to get referenced ClusterBaseModel"
    assert verdict.runtime == ("ClusterServingRuntime", "", "rt")
    assert verdict.webhook_model == ("BaseModel", "team", "llama")
    assert verdict.fix == "set spec.model.kind: BaseModel"
    older = evaluate(
        model("llama", namespace="team"), runtime("rt"), isvc(model_ref={"name": "llama"}), behaviour="17b77eda"
    )
    assert (older.verdict, older.error, older.notes) == (SELECTED, None, ())


def test_the_strict_kind_proposal_does_not_find_it() -> None:
    verdict = evaluate(
        model("llama", namespace="team"), runtime("rt"), isvc(model_ref={"name": "llama"}), behaviour=STRICT
    )

    assert (verdict.verdict, verdict.failure) == (BLOCKED, "model-not-found")
    assert verdict.error == "No BaseModel or ClusterBaseModel with the name: llama"
    assert verdict.event == ("ModelReconcileError", verdict.error)
    assert verdict.fix == "set spec.model.kind: BaseModel"
    assert "referenced without kind: BaseModel" in verdict.notes[0]


def test_with_both_kinds_v13_takes_the_base_model_the_proposal_the_kind() -> None:
    objects = (
        model("llama", namespace="team"),
        model("llama", modelFramework={"name": "transformers", "version": "4.40.0"}),
        runtime("rt"),
        isvc(model_ref={"name": "llama", "kind": "ClusterBaseModel"}),
    )
    verdict = evaluate(*objects)
    strict = evaluate(*objects, behaviour=STRICT)
    older = evaluate(*objects, behaviour="17b77eda")

    assert (verdict.verdict, verdict.failure, verdict.model) == (SILENT, "shadowed", ("BaseModel", "team", "llama"))
    assert (strict.model, strict.failure) == (("ClusterBaseModel", "", "llama"), "no-runtime")
    assert strict.notes
    assert (older.verdict, older.model) == (SELECTED, ("BaseModel", "team", "llama"))


def test_an_unsupported_model_kind_under_the_proposal() -> None:
    verdict = evaluate(model("llama"), isvc(model_ref={"name": "llama", "kind": "Model"}), behaviour=STRICT)

    assert (verdict.failure, verdict.error) == ("unsupported-kind", 'unsupported Model kind "Model"')


def test_a_named_runtime_is_looked_up_by_kind() -> None:
    objects = (model("llama"), runtime("rt", namespace="team", auto=False), runtime("rt", disabled=True))

    by_default = evaluate(*objects, isvc(model_ref={"name": "llama"}, runtime_ref={"name": "rt"}))
    namespaced = evaluate(
        *objects, isvc(model_ref={"name": "llama"}, runtime_ref={"name": "rt", "kind": "ServingRuntime"})
    )

    # The CRD default kind ClusterServingRuntime finds the disabled cluster runtime first (U4).
    assert (by_default.verdict, by_default.failure, by_default.error) == (
        BLOCKED,
        "runtime-disabled",
        "cluster-scoped runtime rt is disabled",
    )
    older = evaluate(*objects, isvc(model_ref={"name": "llama"}, runtime_ref={"name": "rt"}), behaviour="17b77eda")
    assert (older.verdict, older.runtime) == (NAMED, ("ServingRuntime", "team", "rt"))  # the namespace first
    assert (namespaced.verdict, namespaced.runtime) == (NAMED, ("ServingRuntime", "team", "rt"))


def test_a_missing_named_runtime() -> None:
    verdict = evaluate(
        model("llama"), isvc(model_ref={"name": "llama"}, runtime_ref={"name": "x", "kind": "ServingRuntime"})
    )

    assert (verdict.failure, verdict.error) == ("runtime-not-found", "ServingRuntime x not found in namespace team")
    assert verdict.event == ("RuntimeNotFound", verdict.error)
    older = evaluate(
        model("llama"),
        isvc(model_ref={"name": "llama"}, runtime_ref={"name": "x", "kind": "ServingRuntime"}),
        behaviour="17b77eda",
    )
    assert older.error == "runtime x not found in namespace team or at cluster scope"
    assert older.event == ("RuntimeValidationError", f"Runtime x does not support model llama: {older.error}")


def sharded(*, ready: dict[str, Any] | None) -> dict[str, Any]:
    """A Sharded model at generation 2, with `ready` as its Ready condition (None: no conditions)."""
    obj = model("llama", distribution="Sharded")
    obj["metadata"]["generation"] = 2
    obj["status"] = {"conditions": [] if ready is None else [{"type": "Ready", **ready}]}
    return obj


def test_an_incompatible_named_runtime_for_a_ready_sharded_model_blocks() -> None:
    verdict = evaluate(
        sharded(ready={"status": "True", "observedGeneration": 2}),
        runtime("rt"),
        isvc(model_ref={"name": "llama"}, runtime_ref={"name": "rt"}),
    )

    assert (verdict.verdict, verdict.failure) == (BLOCKED, "sharded")
    assert "no model cache provider is configured for sharded model loading" in (verdict.error or "")


def test_a_service_waits_for_a_sharded_model_that_is_not_ready_and_is_not_blocked() -> None:
    # ome-projects/ome controller.go at 0df64b72: ModelNotReady (Normal), requeued after 5 s.
    first = {("team", "svc", ""): FirstVerdict(SELECTED, ("ClusterServingRuntime", "", "rt"), "", "", "t0")}

    verdict = evaluate(
        sharded(ready=None), runtime("rt"), isvc(model_ref={"name": "llama"}, runtime_ref={"name": "rt"}), first=first
    )

    assert (verdict.verdict, verdict.label, verdict.failure) == (WAITING, "waiting for the model", None)
    assert verdict.event == ("ModelNotReady", "model Ready condition is not available")
    assert (verdict.drift, isvc_at_risk(verdict), group_of(verdict)) == (None, False, "waiting")


def test_a_service_first_seen_waiting_has_not_drifted_once_its_model_is_ready() -> None:
    # OME never deployed it: it checked again by itself (every 5 s) and now decides for the first time.
    first = {("team", "svc", ""): FirstVerdict(WAITING, None, "", "model Ready condition is not available", "t0")}

    verdict = evaluate(
        sharded(ready={"status": "True", "observedGeneration": 2}),
        runtime("rt"),
        isvc(model_ref={"name": "llama"}, runtime_ref={"name": "rt"}),
        first=first,
    )

    assert (verdict.verdict, verdict.failure, verdict.drift) == (BLOCKED, "sharded", None)
    assert group_of(verdict) == "blocked"


def test_accelerator_classes_take_part_in_auto_selection() -> None:
    h100 = runtime("h100", acceleratorRequirements={"acceleratorClasses": ["nvidia-h100"]})
    plain = runtime("plain")
    wanted = {"ome.io/accelerator-class": "nvidia-h100"}

    picked = evaluate(model("llama"), h100, plain, isvc(model_ref={"name": "llama"}, annotations=wanted))
    missing = evaluate(model("llama"), plain, isvc(model_ref={"name": "llama"}, annotations=wanted))

    assert picked.runtime == ("ClusterServingRuntime", "", "h100")
    assert missing.failure == "no-runtime"
    assert "plain (runtime does not support the required accelerator class)" in (missing.error or "")
    assert missing.fix is not None
    assert missing.fix.startswith("runtime plain matches the model but not the service's accelerator class")


def test_the_lean_path_and_a_disabled_model() -> None:
    lean = evaluate(runtime("rt"), isvc(runtime_ref={"name": "rt"}))
    nothing = evaluate(runtime("rt"), isvc())
    disabled = evaluate(model("llama", disabled=True), runtime("rt"), isvc(model_ref={"name": "llama"}))

    assert (lean.verdict, lean.runtime) == (NAMED, ("ClusterServingRuntime", "", "rt"))
    assert (nothing.failure, nothing.error) == (
        "no-model",
        "InferenceService must specify spec.runtime when spec.model is omitted",
    )
    older = evaluate(runtime("rt"), isvc(), behaviour="17b77eda")
    assert (older.error, older.event) == ("model reference is required", ("ModelReconcileError", older.error))
    assert (disabled.failure, disabled.error) == ("model-disabled", "specified base model llama is disabled")


def test_a_running_service_whose_named_runtime_stopped_declaring_support() -> None:
    changed = model("llama", modelFramework={"name": "transformers", "version": "4.52.0"})
    status = {"conditions": [{"type": "Ready", "status": "True"}]}

    verdict = evaluate(
        changed, runtime("rt"), isvc(model_ref={"name": "llama"}, runtime_ref={"name": "rt"}, status=status)
    )

    assert (verdict.verdict, verdict.drift, verdict.drift_basis) == (ADVISORY, "no-longer-matches", "status")


def test_a_first_verdict_whose_runtime_no_longer_matches() -> None:
    first = {("team", "svc", ""): FirstVerdict(SELECTED, ("ClusterServingRuntime", "", "old"), "", "", "t0")}

    verdict = evaluate(
        model("llama"),
        runtime("new"),
        runtime("old", auto=False, disabled=True),
        isvc(model_ref={"name": "llama"}),
        first=first,
    )

    assert (verdict.runtime, verdict.drift) == (("ClusterServingRuntime", "", "new"), "no-longer-matches")
    assert verdict.to_dict()["first"]["runtime"] == {"kind": "ClusterServingRuntime", "namespace": "", "name": "old"}


def test_a_pinned_runtime_is_not_validated_by_newer_ome() -> None:
    changed = model("llama", modelFramework={"name": "transformers", "version": "4.52.0"})

    verdict = evaluate(
        changed, runtime("rt"), isvc(model_ref={"name": "llama"}, runtime_ref={"name": "rt", "autoSync": False})
    )

    assert (verdict.verdict, verdict.error) == (NAMED, None)
    assert "autoSync is false" in verdict.notes[0]
    older = evaluate(
        changed,
        runtime("rt"),
        isvc(model_ref={"name": "llama"}, runtime_ref={"name": "rt", "autoSync": False}),
        behaviour="17b77eda",
    )
    assert (older.verdict, older.failure) == (BLOCKED, "incompatible")  # no pinning before


def test_a_ready_false_condition_falls_back_to_the_first_verdict() -> None:
    first = {("team", "svc", ""): FirstVerdict(BLOCKED, None, "no-runtime", "no runtime found", "t0")}
    status = {"conditions": [{"type": "Ready", "status": "False", "reason": "ComponentNotReady"}]}

    verdict = evaluate(model("llama"), runtime("rt"), isvc(model_ref={"name": "llama"}, status=status), first=first)

    assert (verdict.drift, verdict.drift_basis) == ("would-now-succeed", "first-seen")


def test_a_manual_only_runtime_is_the_fix_for_no_runtime() -> None:
    verdict = evaluate(model("llama"), runtime("rt", auto=False), isvc(model_ref={"name": "llama"}))

    assert verdict.failure == "no-runtime"
    assert (
        verdict.fix
        == "set autoSelect: true on runtime rt or name it in spec.runtime.name (it matches but is manual-only)"
    )
