"""The one door for writes to a cluster: plan, preview and apply `spec.diffusionPipeline` patches.

`patch_apply` is the only function in the project that changes a cluster. It checks the user's
permission, accepts nothing but `spec.diffusionPipeline`, validates the patched object, sends a
JSON merge patch carrying the resourceVersion the user saw (the API server answers 409 if the
object changed since), stores the returned object through `inventory.sync.event_apply` (which
announces the change, so the matrix updates through the normal path) and records one
PatchAttempt, whatever the outcome. Kubernetes errors become outcomes, never exceptions.
"""

from __future__ import annotations

import copy
import json
import logging
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction

import matching
from inventory import kube
from inventory.models import CLUSTER_SCOPED, MODEL_KINDS, RUNTIME_KINDS, Cluster, Resource
from inventory.sync import event_apply
from matching.types import NAMED_COMPONENTS
from whatif.services import WhatIfError, whatif_model_patch

from .errors import PatchError, PatchInvalid, PatchTargetMissing, UploadInvalid
from .models import APPLY_PERMISSION, PatchAttempt

logger = logging.getLogger(__name__)

__all__ = [
    "MAX_UPLOAD_BYTES",
    "ApplyOutcome",
    "PatchPreview",
    "cluster_get",
    "kubectl_command",
    "model_get",
    "patch_apply",
    "patch_check",
    "patch_plan",
    "patch_preview",
    "pipeline_from_upload",
    "runtime_get",
    "version_of",
]

MAX_UPLOAD_BYTES = 256 * 1024
PIPELINE_KEYS = frozenset({"className", "additionalComponents", *NAMED_COMPONENTS})
COMPONENT_KEYS = frozenset({"library", "type"})

Result = PatchAttempt.Result
User: TypeAlias = "AbstractBaseUser | AnonymousUser"


# ---- finding the cluster, the model and the runtime -----------------------------------------


def cluster_get(value: Any) -> Cluster:
    """A cluster by name, or by id."""
    text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
    if not text:
        raise PatchInvalid("name the cluster (its name or id)", field="cluster")
    cluster = Cluster.objects.filter(name=text).first()
    if cluster is None and text.isdigit():
        cluster = Cluster.objects.filter(pk=int(text)).first()
    if cluster is None:
        raise PatchTargetMissing(f"no cluster named {text!r}", field="cluster")
    return cluster


def _key_parts(value: Any, what: str) -> tuple[str | None, str | None, str]:
    """(kind, namespace, name) from `Kind/name`, `Kind/namespace/name`, a bare name, a mapping
    or a 3-sequence; None where the reference leaves it open."""
    if isinstance(value, Mapping):
        kind, namespace, name = value.get("kind"), value.get("namespace"), value.get("name")
    elif isinstance(value, list | tuple) and len(value) == 3:
        kind, namespace, name = value
    elif isinstance(value, str):
        parts = value.strip().split("/")
        if len(parts) > 3:
            raise PatchInvalid(f"{value!r} is not Kind/name, Kind/namespace/name, a name or an id", field=what)
        kind = parts[0] if len(parts) > 1 else None
        namespace = parts[1] if len(parts) == 3 else None
        name = parts[-1]
    else:
        raise PatchInvalid(f"give the {what} as Kind/[namespace/]name, a name or an id", field=what)
    for part in (kind, namespace, name):
        if part is not None and not isinstance(part, str):
            raise PatchInvalid(f"{value!r} is not a (kind, namespace, name) key", field=what)
    if not name:
        raise PatchInvalid(f"the {what} name is empty", field=what)
    return kind or None, namespace, name


def _resource_get(cluster: Cluster, value: Any, kinds: tuple[str, ...], what: str) -> Resource:
    if isinstance(value, Resource):
        if value.cluster_id != cluster.pk or value.kind not in kinds:
            raise PatchInvalid(f"{value} is not a {what} of cluster {cluster}", field=what)
        return value
    found = Resource.objects.filter(cluster=cluster, kind__in=kinds)
    is_id = isinstance(value, int) and not isinstance(value, bool)
    if is_id or (isinstance(value, str) and value.strip().isdigit()):
        resource = found.filter(pk=int(value)).first()
        if resource is not None:
            return resource
        if is_id:
            raise PatchTargetMissing(f"cluster {cluster} has no {what} with id {value}", field=what)
    kind, namespace, name = _key_parts(value, what)
    if kind is not None and kind not in kinds:
        raise PatchInvalid(f"{kind!r} is not a {what} kind ({' or '.join(kinds)})", field=what)
    found = found.filter(name=name)
    if kind is not None:
        found = found.filter(kind=kind)
    if kind in CLUSTER_SCOPED:
        found = found.filter(namespace="")
    elif namespace is not None:
        found = found.filter(namespace=namespace)
    matches = list(found[:6])
    if not matches:
        raise PatchTargetMissing(f"cluster {cluster} has no {what} {value!r}", field=what)
    if len(matches) > 1:
        names = ", ".join(_key_text(r.key) for r in matches[:5])
        raise PatchInvalid(f"{value!r} names several {what}s ({names}); give Kind/namespace/name", field=what)
    return matches[0]


def model_get(cluster: Cluster, value: Any) -> Resource:
    """A BaseModel or ClusterBaseModel of the cluster, by id, key or (unambiguous) name."""
    return _resource_get(cluster, value, MODEL_KINDS, "model")


def runtime_get(cluster: Cluster, value: Any) -> Resource:
    """A ServingRuntime or ClusterServingRuntime of the cluster, by id, key or name."""
    return _resource_get(cluster, value, RUNTIME_KINDS, "runtime")


def _key_text(key: tuple[str, str, str]) -> str:
    kind, namespace, name = key
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


def version_of(cluster: Cluster, resource: Resource) -> str:
    """The version a preview hands out and an apply must send back: the object's
    resourceVersion on a live cluster; on a manifest snapshot, whose objects have none that
    changes, a token of the stored content."""
    if cluster.is_live:
        return resource.resource_version
    return f"content-{resource.content_hash[:16]}"


# ---- the plan and the patch ---------------------------------------------------------------


def patch_plan(cluster: Cluster, model_key: Any, runtime_key: Any) -> matching.PatchPlan:
    """What `matching.pipeline_patch` plans for the stored model and runtime: the smallest
    `{"spec": {"diffusionPipeline": ...}}` merge patch (or None), the entry it targets, and why
    no patch can help (`blocked`)."""
    model, runtime = model_get(cluster, model_key), runtime_get(cluster, runtime_key)
    return _plan(model, runtime)


def _plan(model: Resource, runtime: Resource) -> matching.PatchPlan:
    try:
        return matching.pipeline_patch(model.obj, runtime.obj)
    except matching.ManifestError as error:
        what = "model" if error.obj.startswith(tuple(MODEL_KINDS)) else "runtime"
        raise PatchInvalid(f"the stored {what} is malformed: {error}", field=what) from None


def pipeline_from_upload(upload: str | bytes | Any) -> dict[str, object]:
    """The diffusionPipeline OME records from a model_index.json (text, bytes or an open file),
    at most MAX_UPLOAD_BYTES. Raises UploadInvalid saying what is wrong."""
    if hasattr(upload, "read"):
        upload = upload.read(MAX_UPLOAD_BYTES + 1)
    if isinstance(upload, str):
        if len(upload) > MAX_UPLOAD_BYTES:  # every character takes at least one byte
            raise UploadInvalid(_too_large(), field="model_index")
        upload = upload.encode("utf-8", "surrogatepass")
    if not isinstance(upload, bytes | bytearray):
        raise UploadInvalid("model_index.json must be sent as text", field="model_index")
    if len(upload) > MAX_UPLOAD_BYTES:
        raise UploadInvalid(_too_large(), field="model_index")
    try:
        text = bytes(upload).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UploadInvalid(
            f"model_index.json is not UTF-8 text ({error.reason} at byte {error.start})", field="model_index"
        ) from None
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise UploadInvalid(
            f"model_index.json is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}",
            field="model_index",
        ) from None
    except (ValueError, RecursionError) as error:
        raise UploadInvalid(f"model_index.json is not valid JSON: {error}", field="model_index") from None
    if not isinstance(data, dict):
        raise UploadInvalid(f"model_index.json must hold a JSON object, not {type(data).__name__}", field="model_index")
    try:
        return matching.pipeline_from_model_index(data)
    except matching.ModelIndexError as error:
        raise UploadInvalid(str(error), field="model_index") from None


def _too_large() -> str:
    return f"model_index.json is larger than {MAX_UPLOAD_BYTES // 1024} KiB"


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not allowed")


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
        raise PatchInvalid("the patch must set spec.diffusionPipeline", field="patch.spec.diffusionPipeline")
    pipeline = spec["diffusionPipeline"]
    if pipeline is None:
        return
    path = "patch.spec.diffusionPipeline"
    if not isinstance(pipeline, Mapping):
        raise PatchInvalid("spec.diffusionPipeline must be an object, or null to remove it", field=path)
    # The API server prunes fields its schema does not know, so a typo would be dropped silently.
    for key, value in pipeline.items():
        if key not in PIPELINE_KEYS:
            raise PatchInvalid(f"spec.diffusionPipeline has no field {key!r}", field=f"{path}.{key}")
        if key in NAMED_COMPONENTS:
            _check_component(value, f"{path}.{key}")
        elif key == "additionalComponents" and isinstance(value, Mapping):
            for name, component in value.items():
                _check_component(component, f"{path}.additionalComponents.{name}")


def _check_component(value: Any, path: str) -> None:
    if not isinstance(value, Mapping):
        return  # null removes it; other types are parse_model's to name
    for key in value:
        if key not in COMPONENT_KEYS:
            raise PatchInvalid(f"a pipeline component has no field {key!r} (library, type)", field=f"{path}.{key}")


def _patched(resource: Resource, patch: Mapping[str, Any]) -> dict[str, Any]:
    """The stored object with the patch merged in, validated as OME would read it."""
    after: dict[str, Any] = matching.merge_patch(resource.obj, patch)
    try:
        matching.parse_model(after)
    except matching.ManifestError as error:
        if error.field.startswith("spec.diffusionPipeline"):
            raise PatchInvalid(f"{error.field}: {error.problem}", field=f"patch.{error.field}") from None
        raise PatchInvalid(f"the stored model is malformed: {error.field}: {error.problem}", field="model") from None
    return after


def _pipeline_of(obj: Mapping[str, Any]) -> Any:
    spec = obj.get("spec")
    return spec.get("diffusionPipeline") if isinstance(spec, Mapping) else None


def _is_applied(resource: Resource, patch: Mapping[str, Any]) -> bool:
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


def _without_managed_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    result = copy.deepcopy(dict(obj))
    metadata = result.get("metadata")
    if isinstance(metadata, dict):
        metadata.pop("managedFields", None)
    return result


def _manifests_note(cluster: Cluster, resource: Resource, *, done: bool = False) -> str:
    what = "The change was written" if done else "Applying writes the change"
    return (
        f"Cluster {cluster.name} is a manifest snapshot ({cluster.describe_source()}). {what} to the dashboard's "
        f"stored copy of {_key_text(resource.key)} only, not to the manifest files and not to any Kubernetes "
        "cluster. Reloading the folder will revert it."
    )


# ---- preview ------------------------------------------------------------------------------


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
    return {"id": resource.pk, "kind": resource.kind, "namespace": resource.namespace, "name": resource.name}


def patch_preview(
    cluster: Cluster,
    *,
    model: Any,
    runtime: Any = None,
    pipeline: Mapping[str, Any] | None = None,
    patch: Mapping[str, Any] | None = None,
) -> PatchPreview:
    """The patch (planned for `runtime`, built from an explicit `pipeline`, or given whole as
    `patch`), the model before and after, the matrix diff, and the equivalent kubectl command.

    With a runtime whose plan has no patch (the model already passes, or nothing can help),
    `patch` is None and `notes` say why. Raises PatchInvalid / PatchTargetMissing.
    """
    if sum(source is not None for source in (runtime, pipeline, patch)) != 1:
        raise PatchInvalid("give exactly one of runtime, diffusionPipeline or patch", field="runtime")
    resource = model_get(cluster, model)
    runtime_resource: Resource | None = None
    plan: matching.PatchPlan | None = None
    notes: list[str] = []
    if runtime is not None:
        runtime_resource = runtime_get(cluster, runtime)
        plan = _plan(resource, runtime_resource)
        patch = plan.patch
        if patch is None and plan.entry is not None:
            passed = f"{_key_text(resource.key)} already passes entry {plan.entry}"
            notes.append(f"{passed} of {_key_text(runtime_resource.key)}: nothing to patch.")
        elif patch is None:
            notes.append("No diffusionPipeline patch can make the model pass this runtime: " + "; ".join(plan.blocked))
    elif pipeline is not None:
        if not isinstance(pipeline, Mapping):
            raise PatchInvalid("diffusionPipeline must be an object", field="diffusionPipeline")
        patch = {"spec": {"diffusionPipeline": dict(pipeline)}}
    if not cluster.is_live:
        notes.append(_manifests_note(cluster, resource))
    before = _without_managed_fields(resource.obj)
    if patch is None:
        return PatchPreview(
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
    try:
        patch_check(patch)
        after = _without_managed_fields(_patched(resource, patch))
    except PatchInvalid as error:
        if pipeline is not None and error.field and error.field.startswith("patch.spec."):
            error.field = error.field.removeprefix("patch.spec.")
        raise
    already = _is_applied(resource, patch)
    if already:
        notes.append("The model already has these values: applying sends nothing.")
    try:
        diff = whatif_model_patch(cluster, resource.key, patch).to_dict()
    except WhatIfError as error:
        raise PatchInvalid(str(error), field="patch") from None
    return PatchPreview(
        cluster=cluster,
        model=resource,
        resource_version=version_of(cluster, resource),
        patch=dict(patch),
        before=before,
        after=after,
        already_applied=already,
        kubectl=kubectl_command(resource.kind, resource.namespace, resource.name, patch),
        matrix_diff=diff,
        runtime=runtime_resource,
        plan=plan,
        notes=notes,
    )


# ---- apply --------------------------------------------------------------------------------

HTTP_STATUS = {
    Result.APPLIED: 200,
    Result.ALREADY_APPLIED: 200,
    Result.CONFLICT: 409,
    Result.REJECTED: 400,
    Result.DENIED: 403,
    # The dashboard's own caller is authenticated; it is the cluster (upstream) that refused us.
    Result.UNAUTHORIZED: 502,
    Result.NOT_FOUND: 404,
    Result.UNAVAILABLE: 503,
    Result.ERROR: 502,
}


@dataclass(frozen=True)
class ApplyOutcome:
    """The recorded attempt, the object as stored afterwards (None when unknown), the version to
    send with the next patch, and for a rejected request the field it is about."""

    attempt: PatchAttempt
    obj: dict[str, Any] | None = None
    resource_version: str = ""
    field: str | None = None

    @property
    def result(self) -> str:
        return self.attempt.result

    @property
    def ok(self) -> bool:
        return self.attempt.result in (Result.APPLIED, Result.ALREADY_APPLIED)

    @property
    def http_status(self) -> int:
        return HTTP_STATUS[Result(self.attempt.result)]


@dataclass
class _Attempt:
    """What is known so far about one apply; `record` turns it into its PatchAttempt."""

    cluster: Cluster
    user: User
    patch: Any
    resource_version: str
    runtime: str
    kind: str = ""
    namespace: str = ""
    name: str = ""

    def identify(self, resource: Resource) -> None:
        self.kind, self.namespace, self.name = resource.key

    def record(
        self,
        result: str,
        detail: str,
        *,
        target: str = PatchAttempt.Target.NONE,
        new_resource_version: str = "",
        obj: dict[str, Any] | None = None,
        version: str = "",
        field: str | None = None,
    ) -> ApplyOutcome:
        user = self.user if self.user.is_authenticated else None
        attempt = PatchAttempt.objects.create(
            user=user,
            username=user.get_username() if user is not None else "",
            cluster_name=self.cluster.name,
            model_kind=self.kind,
            model_namespace=self.namespace,
            model_name=self.name,
            runtime=self.runtime,
            patch=self.patch if _is_json(self.patch) else repr(self.patch)[:2000],
            resource_version=self.resource_version[:128],
            new_resource_version=new_resource_version[:128],
            target=target,
            result=result,
            detail=detail,
        )
        logger.info("patch attempt %s by %s on %s: %s", attempt.pk, attempt.username or "-", attempt.model_text, result)
        return ApplyOutcome(attempt, obj=obj, resource_version=version, field=field)


def _is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def _reference_text(value: Any) -> str:
    if isinstance(value, Resource):
        return _key_text(value.key)
    return str(value)[:253] if value is not None else ""


def patch_apply(
    cluster: Cluster,
    *,
    model: Any,
    patch: Any,
    resource_version: str,
    user: User,
    runtime: Any = None,
) -> ApplyOutcome:
    """Apply a `spec.diffusionPipeline` merge patch to one model, if `user` may, and record it.

    Every call records exactly one PatchAttempt and returns its outcome (see PatchAttempt.Result);
    Kubernetes errors are outcomes, not exceptions. A live cluster gets the patch with
    `metadata.resourceVersion` = `resource_version` as a precondition, so a model that changed
    since the preview is a conflict and nothing is overwritten. A manifest snapshot gets the
    change in its stored object only (the files are not touched). When the model already has the
    patched values nothing is sent.
    """
    user = user if user is not None else AnonymousUser()
    allowed = user.is_authenticated and user.has_perm(APPLY_PERMISSION)
    attempt = _Attempt(cluster, user, patch, str(resource_version or ""), _reference_text(runtime))
    attempt.name = _reference_text(model)
    try:
        resource = model_get(cluster, model)
    except PatchError as error:
        if not allowed:
            return attempt.record(Result.DENIED, _denied())
        result = Result.NOT_FOUND if isinstance(error, PatchTargetMissing) else Result.REJECTED
        return attempt.record(result, error.message, field=error.field)
    attempt.identify(resource)
    if not allowed:
        return attempt.record(Result.DENIED, _denied())
    try:
        patch_check(patch)
        if not attempt.resource_version:
            raise PatchInvalid(
                "resource_version is required: send the one the preview returned", field="resource_version"
            )
        if _is_applied(resource, patch):
            return attempt.record(
                Result.ALREADY_APPLIED,
                f"{_key_text(resource.key)} already has these values: nothing was sent",
                obj=resource.obj,
                version=version_of(cluster, resource),
            )
        _patched(resource, patch)
    except PatchInvalid as error:
        return attempt.record(Result.REJECTED, error.message, field=error.field)
    if cluster.is_live:
        return _apply_live(attempt, resource, patch)
    return _apply_stored(attempt, resource, patch)


def _denied() -> str:
    return f"applying patches needs the {APPLY_PERMISSION} permission"


def _apply_live(attempt: _Attempt, resource: Resource, patch: Mapping[str, Any]) -> ApplyOutcome:
    cluster, key = attempt.cluster, _key_text(resource.key)
    body = matching.merge_patch(patch, {"metadata": {"resourceVersion": attempt.resource_version}})
    sent = PatchAttempt.Target.CLUSTER
    try:
        api = kube.client_for(cluster)
    except kube.KubeError as error:
        return attempt.record(Result.ERROR, f"cannot connect to cluster {cluster.name}: {error.message}")
    try:
        returned = kube.patch_object(api, resource.kind, resource.namespace, resource.name, body)
    except kube.KubeConflict as error:
        detail = (
            f"{key} changed on the cluster since resourceVersion {attempt.resource_version}: nothing was "
            f"overwritten. Preview again to see the current object. ({error.message})"
        )
        return attempt.record(Result.CONFLICT, detail, target=sent, **_refreshed(cluster, api, resource))
    except kube.KubeUnauthorized as error:
        detail = f"the cluster refused the credentials ({error.status}): nothing was changed. {error.message}"
        return attempt.record(Result.UNAUTHORIZED, detail, target=sent)
    except kube.KubeNotFound as error:
        return attempt.record(Result.NOT_FOUND, f"{key} is not on the cluster: {error.message}", target=sent)
    except kube.KubeUnavailable as error:
        detail = (
            f"the cluster is unavailable: {error.message}. If the request timed out the patch may have been "
            "applied; preview again before retrying (a retry with the same resource_version cannot overwrite)."
        )
        return attempt.record(Result.UNAVAILABLE, detail, target=sent)
    except kube.KubeError as error:
        return attempt.record(Result.ERROR, f"the cluster rejected the patch: {error.message}", target=sent)
    except Exception as error:
        attempt.record(Result.ERROR, f"unexpected error: {type(error).__name__}", target=sent)
        raise
    finally:
        kube.close(api)
    version = str((returned.get("metadata") or {}).get("resourceVersion") or "")
    outcome = attempt.record(
        Result.APPLIED,
        f"{key} patched on cluster {cluster.name} (resourceVersion {version})",
        target=sent,
        new_resource_version=version,
        obj=returned,
        version=version,
    )
    _store_returned(cluster, returned)
    return outcome


def _refreshed(cluster: Cluster, api: Any, resource: Resource) -> dict[str, Any]:
    """After a conflict, store the cluster's current object so the next preview shows it (best
    effort: the watch or the next resync will bring it anyway)."""
    try:
        current = kube.get_object(api, resource.kind, resource.namespace, resource.name)
    except kube.KubeError as error:
        logger.info("cluster %s: could not refresh %s after a conflict: %s", cluster, resource, error.message)
        return {}
    _store_returned(cluster, current)
    version = str((current.get("metadata") or {}).get("resourceVersion") or "")
    return {"obj": current, "version": version}


def _store_returned(cluster: Cluster, obj: dict[str, Any]) -> None:
    """Store an object the API server returned, unless a newer version is stored already (a
    watch event may have come first)."""
    metadata = obj.get("metadata") or {}
    returned = str(metadata.get("resourceVersion") or "")
    with transaction.atomic():
        stored = (
            Resource.objects.select_for_update()
            .filter(
                cluster=cluster,
                kind=obj.get("kind"),
                namespace="" if obj.get("kind") in CLUSTER_SCOPED else str(metadata.get("namespace") or ""),
                name=str(metadata.get("name") or ""),
            )
            .values_list("resource_version", flat=True)
            .first()
        )
        if stored and returned and stored.isdigit() and returned.isdigit() and int(stored) > int(returned):
            return
        event_apply(cluster, "MODIFIED", obj)


def _apply_stored(attempt: _Attempt, resource: Resource, patch: Mapping[str, Any]) -> ApplyOutcome:
    cluster, key = attempt.cluster, _key_text(resource.key)
    with transaction.atomic():
        current = Resource.objects.select_for_update().filter(pk=resource.pk).first()
        if current is None:
            return attempt.record(Result.NOT_FOUND, f"{key} was removed from the inventory")
        now = version_of(cluster, current)
        if attempt.resource_version != now:
            detail = (
                f"{key} changed since the preview (version {attempt.resource_version}, now {now}): nothing was "
                "overwritten. Preview again."
            )
            return attempt.record(Result.CONFLICT, detail, obj=current.obj, version=now)
        after = _patched(current, patch)
        event_apply(cluster, "MODIFIED", after)
        current.refresh_from_db()
        version = version_of(cluster, current)
        return attempt.record(
            Result.APPLIED,
            _manifests_note(cluster, current, done=True),
            target=PatchAttempt.Target.INVENTORY,
            new_resource_version=version,
            obj=current.obj,
            version=version,
        )
