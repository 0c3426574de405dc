"""Applying a `spec.diffusionPipeline` patch, the only write to a cluster, with one PatchAttempt
recorded per call whatever the outcome."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

import matching
from access.scope import Scope, scope_for_user
from core.redact import redact, redact_value
from inventory import kube
from inventory.live.state import object_rv
from inventory.models import Cluster, Resource
from inventory.records import stored
from inventory.sync import object_locked, object_replace, returned_store

from .authorize import cluster_refusal, dashboard_refusal, delegates
from .errors import PatchError, PatchInvalid, PatchTargetMissing
from .lookup import model_get, version_of
from .models import PatchAttempt
from .plan import is_applied, manifests_note, patch_check, patched

logger = logging.getLogger(__name__)
# A refusal's text and field as recorded and answered, at most.
SHOWN_MAX_CHARS = 1000

Result = PatchAttempt.Result
User: TypeAlias = "AbstractBaseUser | AnonymousUser"

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
    scope: Scope
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
        actor = self.scope.actor
        attempt = PatchAttempt.objects.create(
            user_id=user.pk if user is not None else None,
            username=user.get_username() if user is not None else "",
            identity=actor.kube_user if user is not None else "",
            groups=list(actor.kube_groups) if user is not None else [],
            cluster_name=self.cluster.name,
            model_kind=self.kind,
            model_namespace=self.namespace,
            model_name=self.name,
            runtime=self.runtime,
            patch=_stored_patch(self.patch),
            resource_version=self.resource_version[:128],
            new_resource_version=new_resource_version[:128],
            target=target,
            result=result,
            detail=_shortened(redact(detail)),
        )
        logger.info("patch attempt %s by %s on %s: %s", attempt.pk, attempt.username or "-", attempt.model_text, result)
        return ApplyOutcome(attempt, obj=obj, resource_version=version, field=field and _shortened(field))


def _shortened(text: str) -> str:
    """A detail or field name as recorded and answered: a refusal may quote a name the request
    made up, of any size."""
    return text if len(text) <= SHOWN_MAX_CHARS else f"{text[: SHOWN_MAX_CHARS - 1]}…"


def _stored_patch(value: Any) -> Any:
    """The patch as the audit log keeps it: redacted, and above OME_AUDIT_PATCH_MAX_BYTES its
    first bytes only, marked as truncated (a request body may be up to REQUEST_MAX_BYTES)."""
    limit = int(settings.OME_AUDIT_PATCH_MAX_BYTES)
    try:
        text = json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return {"truncated": True, "start": redact(repr(value)[: min(limit, 2000)])}
    if len(text.encode()) > limit:
        return {"truncated": True, "bytes": len(text.encode()), "start": redact(text[:limit])}
    return redact_value(value)


def _reference_text(value: Any) -> str:
    if isinstance(value, Resource):
        return matching.key_path(value.key)
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
    scope = scope_for_user(user)
    attempt = _Attempt(cluster, user, scope, patch, str(resource_version or ""), _reference_text(runtime))
    attempt.name = _reference_text(model)
    if not user.is_authenticated:
        return attempt.record(Result.DENIED, "applying a patch needs a login")
    try:
        # Only objects the user reads are found: others are "not found", whatever exists.
        resource = model_get(cluster, model, scope=scope)
    except PatchError as error:
        result = Result.NOT_FOUND if isinstance(error, PatchTargetMissing) else Result.REJECTED
        return attempt.record(result, error.message, field=error.field)
    attempt.identify(resource)
    delegated = delegates(cluster)
    refusal = None if delegated else dashboard_refusal(scope, cluster, resource)
    if refusal is not None:
        return attempt.record(Result.DENIED, refusal)
    try:
        patch_check(patch)
        if not attempt.resource_version:
            raise PatchInvalid(
                "resource_version is required: send the one the preview returned", field="resource_version"
            )
        if is_applied(resource, patch):
            return attempt.record(
                Result.ALREADY_APPLIED,
                f"{matching.key_path(resource.key)} already has these values: nothing was sent",
                obj=resource.obj,
                version=version_of(cluster, resource),
            )
        patched(resource, patch)
    except PatchInvalid as error:
        return attempt.record(Result.REJECTED, error.message, field=error.field)
    if cluster.is_live:
        return _apply_live(attempt, resource, patch, delegated=delegated)
    return _apply_stored(attempt, resource, patch)


def _apply_live(attempt: _Attempt, resource: Resource, patch: Mapping[str, Any], *, delegated: bool) -> ApplyOutcome:
    cluster, key = attempt.cluster, matching.key_path(resource.key)
    body = matching.merge_patch(patch, {"metadata": {"resourceVersion": attempt.resource_version}})
    sent = PatchAttempt.Target.CLUSTER
    actor = attempt.scope.actor
    try:
        if delegated:
            refusal = _cluster_refusal(attempt, resource)
            if refusal is not None:
                return refusal
        api = kube.client_for(cluster, impersonate=(actor.kube_user, actor.kube_groups) if delegated else None)
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
    except kube.KubeError as error:
        return attempt.record(*_refusal(error, key), target=sent)
    except Exception as error:
        attempt.record(Result.ERROR, f"unexpected error: {type(error).__name__}", target=sent)
        raise
    finally:
        kube.close(api)
    version = object_rv(returned)
    outcome = attempt.record(
        Result.APPLIED,
        f"{key} patched on cluster {cluster.name} (resourceVersion {version})",
        target=sent,
        new_resource_version=version,
        obj=stored(returned),  # the cluster's object holds its credentials: shown as stored
        version=version,
    )
    returned_store(cluster, returned)
    return outcome


def _cluster_refusal(attempt: _Attempt, resource: Resource) -> ApplyOutcome | None:
    """The DENIED outcome when the delegating cluster's RBAC refuses the user; None when it allows."""
    api = kube.client_for(attempt.cluster)
    try:
        refusal = cluster_refusal(api, attempt.scope, resource)
    except kube.KubeError as error:
        return attempt.record(*_refusal(error, matching.key_path(resource.key)))
    finally:
        kube.close(api)
    return None if refusal is None else attempt.record(Result.DENIED, refusal)


def _refusal(error: kube.KubeError, key: str) -> tuple[str, str]:
    """The result and detail of a patch the API server did not apply (a conflict apart)."""
    if isinstance(error, kube.KubeUnauthorized):
        return Result.UNAUTHORIZED, (
            f"the cluster refused the credentials ({error.http_status}): nothing was changed. {error.message}"
        )
    if isinstance(error, kube.KubeNotFound):
        return Result.NOT_FOUND, f"{key} is not on the cluster: {error.message}"
    if isinstance(error, kube.KubeUnavailable):
        return Result.UNAVAILABLE, (
            f"the cluster is unavailable: {error.message}. If the request timed out the patch may have been "
            "applied; preview again before retrying (a retry with the same resource_version cannot overwrite)."
        )
    return Result.ERROR, f"the cluster rejected the patch: {error.message}"


def _refreshed(cluster: Cluster, api: Any, resource: Resource) -> dict[str, Any]:
    """After a conflict, store the cluster's current object so the next preview shows it (best
    effort: the watch or the next resync will bring it anyway)."""
    try:
        current = kube.get_object(api, resource.kind, resource.namespace, resource.name)
    except kube.KubeError as error:
        logger.info("cluster %s: could not refresh %s after a conflict: %s", cluster, resource, error.message)
        return {}
    returned_store(cluster, current)
    version = object_rv(current)
    return {"obj": stored(current), "version": version}


def _apply_stored(attempt: _Attempt, resource: Resource, patch: Mapping[str, Any]) -> ApplyOutcome:
    cluster, key = attempt.cluster, matching.key_path(resource.key)
    with object_locked(cluster, resource.pk) as current:  # the audit row commits with the change
        if current is None:
            return attempt.record(Result.NOT_FOUND, f"{key} was removed from the inventory")
        now = version_of(cluster, current)
        if attempt.resource_version != now:
            detail = (
                f"{key} changed since the preview (version {attempt.resource_version}, now {now}): nothing was "
                "overwritten. Preview again."
            )
            return attempt.record(Result.CONFLICT, detail, obj=current.obj, version=now)
        current = object_replace(cluster, current, patched(current, patch))
        version = version_of(cluster, current)
        return attempt.record(
            Result.APPLIED,
            manifests_note(cluster, current, done=True),
            target=PatchAttempt.Target.INVENTORY,
            new_resource_version=version,
            obj=current.obj,
            version=version,
        )
