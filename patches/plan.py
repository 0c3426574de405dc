"""Planning and previewing a `spec.diffusionPipeline` patch: what to send, what it changes in the
object and in the matrix, the equivalent kubectl command. Nothing is sent from here."""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import matching
from access.scope import Scope
from inventory.models import CLUSTER_SCOPED, MODEL_KINDS, Cluster, Resource
from inventory.parsed import pipeline_plan
from matching import NAMED_COMPONENTS
from whatif.errors import WhatIfError
from whatif.services import whatif_model_patch

from .errors import PatchInvalid
from .lookup import model_get, runtime_get, version_of
from .models import PatchAttempt

PIPELINE_KEYS = frozenset({"className", "additionalComponents", *NAMED_COMPONENTS})
COMPONENT_KEYS = frozenset({"library", "type"})
PIPELINE_PATH = "patch.spec.diffusionPipeline"
# Class, library, type and component names are identifiers: these bounds are far above any real
# one and keep a megabyte of text out of the cluster, the audit log and every page showing it.
PIPELINE_VALUE_MAX_CHARS = 253
PIPELINE_COMPONENTS_MAX = 64


def patch_plan(cluster: Cluster, model_key: Any, runtime_key: Any, *, scope: Scope) -> matching.PatchPlan:
    """What `matching.pipeline_patch` plans for the stored model and runtime: the smallest
    `{"spec": {"diffusionPipeline": ...}}` merge patch (or None), the entry it targets, and why
    no patch can help (`blocked`)."""
    return _plan(model_get(cluster, model_key, scope=scope), runtime_get(cluster, runtime_key, scope=scope))


def _plan(model: Resource, runtime: Resource) -> matching.PatchPlan:
    try:
        return pipeline_plan(model, runtime)
    except matching.ManifestError as error:
        what = "model" if error.obj.startswith(tuple(MODEL_KINDS)) else "runtime"
        raise PatchInvalid(f"the stored {what} is malformed: {error}", field=what) from None


def patch_check(patch: Any) -> None:
    """Only `spec.diffusionPipeline` may be patched through this door: an object, or null to
    remove the pipeline. Raises PatchInvalid naming the first field that is not allowed."""
    if not isinstance(patch, Mapping):
        raise PatchInvalid("the patch must be a JSON object", field="patch")
    for key in patch:
        if key != "spec":
            raise PatchInvalid(f"only spec.diffusionPipeline can be patched here, not {key}", field=f"patch.{key}")
    spec = patch.get("spec")
    if not isinstance(spec, Mapping):
        raise PatchInvalid("the patch must set spec.diffusionPipeline", field="patch.spec")
    for key in spec:
        if key != "diffusionPipeline":
            raise PatchInvalid(
                f"only spec.diffusionPipeline can be patched here, not spec.{key}", field=f"patch.spec.{key}"
            )
    if "diffusionPipeline" not in spec:
        raise PatchInvalid("the patch must set spec.diffusionPipeline", field=PIPELINE_PATH)
    _check_pipeline(spec["diffusionPipeline"])


def _check_pipeline(pipeline: Any) -> None:
    if pipeline is None:
        return
    if not isinstance(pipeline, Mapping):
        raise PatchInvalid("spec.diffusionPipeline must be an object, or null to remove it", field=PIPELINE_PATH)
    # The API server prunes fields its schema does not know, so a typo would be dropped silently.
    for key, value in pipeline.items():
        if key not in PIPELINE_KEYS:
            raise PatchInvalid(f"spec.diffusionPipeline has no field {key!r}", field=f"{PIPELINE_PATH}.{key}")
        if key in NAMED_COMPONENTS:
            _check_component(value, f"{PIPELINE_PATH}.{key}")
        elif key == "additionalComponents" and isinstance(value, Mapping):
            _check_components(value)
        else:
            _check_length(value, f"{PIPELINE_PATH}.{key}")


def _check_components(components: Mapping[Any, Any]) -> None:
    path = f"{PIPELINE_PATH}.additionalComponents"
    if len(components) > PIPELINE_COMPONENTS_MAX:
        raise PatchInvalid(
            f"{path} has {len(components)} entries; at most {PIPELINE_COMPONENTS_MAX} are allowed", field=path
        )
    for name, component in components.items():
        _check_length(name, f"{path} (a component's name)")
        _check_component(component, f"{path}.{name}")


def _check_component(value: Any, path: str) -> None:
    if not isinstance(value, Mapping):
        _check_length(value, path)
        return  # null removes it; other types are parse_model's to name
    for key, item in value.items():
        if key not in COMPONENT_KEYS:
            raise PatchInvalid(f"a pipeline component has no field {key!r} (library, type)", field=f"{path}.{key}")
        _check_length(item, f"{path}.{key}")


def _check_length(value: Any, path: str) -> None:
    """A value of any type is bounded: parse_model's message about a wrong type quotes it."""
    size, unit = (
        (len(value), "characters")
        if isinstance(value, str)
        else (len(json.dumps(value, default=str)), "characters of JSON")
    )
    if size > PIPELINE_VALUE_MAX_CHARS:
        raise PatchInvalid(f"{path} is {size} {unit} long; at most {PIPELINE_VALUE_MAX_CHARS} are allowed", field=path)


def patched(resource: Resource, patch: Mapping[str, Any]) -> dict[str, Any]:
    """The stored object with the patch merged in, validated as OME would read it."""
    after: dict[str, Any] = matching.merge_patch(resource.obj, patch)
    try:
        matching.parse_model(after)
    except matching.ManifestError as error:
        if error.field.startswith("spec.diffusionPipeline"):
            raise PatchInvalid(f"{error.field}: {error.problem}", field=f"patch.{error.field}") from None
        raise PatchInvalid(f"the stored model is malformed: {error.field}: {error.problem}", field="model") from None
    return after


def is_applied(resource: Resource, patch: Mapping[str, Any]) -> bool:
    return bool(matching.merge_patch(resource.obj, patch) == resource.obj)


def kubectl_command(kind: str, namespace: str, name: str, patch: Mapping[str, Any]) -> str:
    """The `kubectl patch ... --type merge -p '...'` that makes the same change, safely quoted.

    Names come from the cluster (or a manifest folder) and are untrusted: every word is quoted
    with shlex, and a name or namespace that starts with "-" is written so that kubectl cannot
    read it as a flag.
    """
    resource = kind.lower()
    words = ["kubectl", "patch"]
    words += [f"{resource}/{name}"] if name.startswith("-") else [resource, name]
    if kind not in CLUSTER_SCOPED:
        words += [f"--namespace={namespace}"] if namespace.startswith("-") else ["-n", namespace]
    words += ["--type", "merge", "-p", json.dumps(patch, separators=(",", ":"))]
    return " ".join(shlex.quote(word) for word in words)


def manifests_note(cluster: Cluster, resource: Resource, *, done: bool = False) -> str:
    what = "The change was written" if done else "Applying writes the change"
    return (
        f"Cluster {cluster.name} is a manifest snapshot ({cluster.describe_source()}). {what} to the dashboard's "
        f"stored copy of {matching.key_path(resource.key)} only, not to the manifest files and not to any "
        "Kubernetes cluster. Reloading the folder will revert it."
    )


def _without_managed_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(dict(obj))
    metadata = result.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
    return result


@dataclass(frozen=True)
class PatchPreview:
    """What applying a patch would send and change; nothing is sent to build it."""

    cluster: Cluster
    model: Resource
    resource_version: str
    patch: dict[str, Any] | None
    before: dict[str, Any]
    after: dict[str, Any]
    already_applied: bool
    kubectl: str | None
    matrix_diff: dict[str, Any] | None
    runtime: Resource | None = None
    plan: matching.PatchPlan | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def target(self) -> str:
        return PatchAttempt.Target.CLUSTER if self.cluster.is_live else PatchAttempt.Target.INVENTORY

    def to_dict(self) -> dict[str, Any]:
        return {
            "cluster": self.cluster.name,
            "source": self.cluster.source,
            "target": self.target,
            "model": _resource_dict(self.model),
            "runtime": _resource_dict(self.runtime) if self.runtime is not None else None,
            "resource_version": self.resource_version,
            "plan": self.plan.to_dict() if self.plan is not None else None,
            "patch": self.patch,
            "already_applied": self.already_applied,
            "before": self.before,
            "after": self.after,
            "kubectl": self.kubectl,
            "matrix_diff": self.matrix_diff,
            "notes": list(self.notes),
        }


def _resource_dict(resource: Resource) -> dict[str, Any]:
    return {"id": resource.pk, **matching.key_dict(resource.key)}


def patch_preview(
    cluster: Cluster,
    *,
    model: Any,
    runtime: Any = None,
    pipeline: Mapping[str, Any] | None = None,
    patch: Mapping[str, Any] | None = None,
    scope: Scope,
) -> PatchPreview:
    """The patch (planned for `runtime`, built from an explicit `pipeline`, or given whole as
    `patch`), the model before and after, the matrix diff, and the equivalent kubectl command.

    With a runtime whose plan has no patch (the model already passes, or nothing can help),
    `patch` is None and `notes` say why. Raises PatchInvalid / PatchTargetMissing.
    """
    if sum(source is not None for source in (runtime, pipeline, patch)) != 1:
        raise PatchInvalid("give exactly one of runtime, diffusionPipeline or patch", field="runtime")
    resource = model_get(cluster, model, scope=scope)
    runtime_resource = runtime_get(cluster, runtime, scope=scope) if runtime is not None else None
    plan: matching.PatchPlan | None = None
    notes: list[str] = []
    if runtime_resource is not None:
        plan = _plan(resource, runtime_resource)
        patch = plan.patch
        notes += _plan_notes(resource, runtime_resource, plan)
    elif pipeline is not None:
        if not isinstance(pipeline, Mapping):
            raise PatchInvalid("diffusionPipeline must be an object", field="diffusionPipeline")
        patch = {"spec": {"diffusionPipeline": dict(pipeline)}}
    if not cluster.is_live:
        notes.append(manifests_note(cluster, resource))
    before = _without_managed_fields(resource.obj)
    preview = PatchPreview(
        cluster=cluster,
        model=resource,
        resource_version=version_of(cluster, resource),
        patch=None,
        before=before,
        after=before,
        already_applied=False,
        kubectl=None,
        matrix_diff=None,
        runtime=runtime_resource,
        plan=plan,
        notes=notes,
    )
    return preview if patch is None else _with_patch(preview, patch, from_pipeline=pipeline is not None, scope=scope)


def _plan_notes(model: Resource, runtime: Resource, plan: matching.PatchPlan) -> list[str]:
    if plan.patch is not None:
        return []
    if plan.entry is not None:
        passed = f"{matching.key_path(model.key)} already passes entry {plan.entry}"
        return [f"{passed} of {matching.key_path(runtime.key)}: nothing to patch."]
    return ["No diffusionPipeline patch can make the model pass this runtime: " + "; ".join(plan.blocked)]


def _with_patch(preview: PatchPreview, patch: Mapping[str, Any], *, from_pipeline: bool, scope: Scope) -> PatchPreview:
    """The preview completed with what the patch sends and changes."""
    resource = preview.model
    try:
        patch_check(patch)
        after = _without_managed_fields(patched(resource, patch))
    except PatchInvalid as error:
        if from_pipeline and error.field and error.field.startswith("patch.spec."):
            error.field = error.field.removeprefix("patch.spec.")
        raise
    already = is_applied(resource, patch)
    notes = list(preview.notes)
    if already:
        notes.append("The model already has these values: applying sends nothing.")
    try:
        diff = whatif_model_patch(preview.cluster, resource.key, patch, scope=scope).to_dict()
    except WhatIfError as error:
        raise PatchInvalid(str(error), field="patch") from None
    return replace(
        preview,
        patch=dict(patch),
        after=after,
        already_applied=already,
        kubectl=kubectl_command(resource.kind, resource.namespace, resource.name, patch),
        matrix_diff=diff,
        notes=notes,
    )
