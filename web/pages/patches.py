"""The one-click pipeline patch pages: preview ("Make this model match"), apply, its result,
and the diffusionPipeline OME would record from a model_index.json.

Applying a patch always needs a login and the patcher role on the model's namespace (its
cluster for a ClusterBaseModel), or on a delegating cluster the cluster's RBAC (checked by
`patches.services.patch_apply`, which records every attempt).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_safe

from access.current import scope_of
from access.scope import Scope
from core.redact import redacted
from core.throttle import throttled
from core.web import CLUSTER_TOKEN, namespace_token, read_access, to_yaml
from inventory.models import RUNTIME_KINDS, Cluster, Kind, Resource
from inventory.selectors import clusters_visible, model_or_404, resources_visible
from patches import services as patches
from patches.authorize import delegates
from patches.errors import PatchError, PatchInvalid
from patches.models import PatchAttempt
from patches.selectors import patch_records_list
from web.pages.matrix import matrix_context

# ---- the one-click pipeline patch --------------------------------------------------------------


def yaml_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A unified diff of two objects as YAML: (kind, line) with kind "add", "del", "hunk" or ""."""
    lines = difflib.unified_diff(
        to_yaml(before).splitlines(), to_yaml(after).splitlines(), "before", "after", lineterm="", n=4
    )
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    return [(kinds.get(line[:1], ""), line) for line in lines if not line.startswith(("+++", "---"))]


def _preview_source(request: HttpRequest) -> dict[str, Any]:
    """What to preview: the plan for a runtime (`runtime=<id>`), or a whole pipeline
    (`pipeline=<JSON>`, from model_index.json)."""
    if request.GET.get("pipeline"):
        try:
            return {"pipeline": json.loads(request.GET["pipeline"])}
        except ValueError as error:
            raise PatchInvalid(f"the pipeline is not JSON: {error}", field="pipeline") from None
    return {"runtime": request.GET.get("runtime") or None}


def _row_changes(diff: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return list(diff.get("rows", [])) if diff else []


def preview_title(preview: patches.PatchPreview) -> str:
    """The page's title: "Make X match Y" only while X does not match Y yet (a plan with no
    patch, no blocker and an entry means the model passes that entry already)."""
    model, runtime, plan = preview.model, preview.runtime, preview.plan
    if runtime is None:
        return (
            f"{model.name}: nothing to change" if preview.already_applied else f"Patch {model.name}'s diffusionPipeline"
        )
    if plan is not None and plan.patch is None and plan.entry is not None and not plan.blocked:
        return f"{model.name} already matches {runtime.name}"
    return f"Make {model.name} match {runtime.name}"


def _preview_context(cluster: Cluster, preview: patches.PatchPreview, scope: Scope) -> dict[str, Any]:
    return {
        "title": preview_title(preview),
        "cluster": cluster,
        "model": preview.model,
        "preview": preview,
        "patch_json": json.dumps(preview.patch, indent=2) if preview.patch is not None else "",
        "patch_compact": json.dumps(preview.patch, separators=(",", ":")) if preview.patch is not None else "",
        "diff_lines": yaml_diff(preview.before, preview.after),
        "before_yaml": to_yaml(preview.before),
        "after_yaml": to_yaml(preview.after),
        "redacted": redacted(preview.before),
        "row_changes": _row_changes(preview.matrix_diff),
        "may_patch": may_patch(cluster, preview.model, scope),
    }


def may_patch(cluster: Cluster, resource: Resource, scope: Scope) -> bool:
    """Whether the page should offer Apply (patch_apply decides again, and records)."""
    return delegates(cluster) or scope.may_patch(cluster.name, resource.namespace)


@require_http_methods(["GET", "HEAD", "POST"])
@read_access
@throttled("patch-preview", methods=("GET",))
def patch(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the preview of a diffusionPipeline patch ("Make this model match"). POST: apply it
    through patches.services.patch_apply, then show the result (redirect) or say plainly why not."""
    scope = scope_of(request)
    resource = model_or_404(pk, scope=scope)
    cluster = resource.cluster
    if request.method == "POST":
        return _patch_apply(request, cluster, resource)
    try:
        preview = patches.patch_preview(cluster, model=resource.pk, **_preview_source(request), scope=scope)
    except PatchError as error:
        return render(
            request, "patches/patch.html", {"cluster": cluster, "model": resource, "error": error}, status=400
        )
    return render(request, "patches/patch.html", _preview_context(cluster, preview, scope))


def _patch_apply(request: HttpRequest, cluster: Cluster, resource: Resource) -> HttpResponse:
    if not request.user.is_authenticated:
        # Back to the preview after signing in: the POST itself cannot be replayed.
        query = QueryDict(mutable=True)
        if request.POST.get("runtime"):
            query["runtime"] = request.POST["runtime"]
        preview = reverse("patches:patch", args=[resource.pk])
        return redirect_to_login(f"{preview}?{query.urlencode()}" if query else preview)
    try:
        body = json.loads(request.POST.get("patch", ""))
    except ValueError:
        body = request.POST.get("patch", "")
    outcome = patches.patch_apply(
        cluster,
        model=resource.pk,
        patch=body,
        resource_version=request.POST.get("resource_version", ""),
        user=request.user,
        runtime=_runtime_from_id(cluster, request.POST.get("runtime"), scope_of(request)),
    )
    if outcome.ok:
        return redirect("patches:patch-result", pk=outcome.attempt.pk)
    context: dict[str, Any] = {"cluster": cluster, "model": resource, "outcome": outcome}
    if outcome.result == PatchAttempt.Result.CONFLICT:
        # Show what is there now, so the user can decide again.
        source = {"runtime": request.POST.get("runtime")} if request.POST.get("runtime") else {"patch": body}
        try:
            scope = scope_of(request)
            current = patches.patch_preview(cluster, model=resource.pk, **source, scope=scope)
            context.update(_preview_context(cluster, current, scope))
        except PatchError as error:
            context["error"] = error
        context["outcome"] = outcome
    return render(request, "patches/patch.html", context, status=outcome.http_status)


@require_safe
def patch_result(request: HttpRequest, pk: int) -> HttpResponse:
    """What an apply did, and the model's refreshed row of the matrix (it refreshes itself when
    the matrix update lands, which a Celery worker may do a moment later)."""
    if not request.user.is_authenticated:
        messages.info(
            request,
            f"Sign in to see patch {pk}: a patch's result and audit record are shown to the user who applied it "
            "and to users who may view the audit log.",
        )
        return redirect_to_login(request.get_full_path())
    scope = scope_of(request)
    # Only the user who applied a patch (or one who may view the audit log) sees its result; to
    # anyone else it answers as a patch that does not exist.
    attempt = get_object_or_404(patch_records_list(scope, request.user), pk=pk)
    cluster = clusters_visible(scope).filter(name=attempt.cluster_name).first()
    resource = None
    if cluster is not None:
        resource = (
            resources_visible(scope)
            .filter(
                cluster=cluster, kind=attempt.model_kind, namespace=attempt.model_namespace, name=attempt.model_name
            )
            .first()
        )
    context: dict[str, Any] = {
        "attempt": attempt,
        "cluster": cluster,
        "model": resource,
        "patch_json": json.dumps(attempt.patch, indent=2),
    }
    if cluster is not None and resource is not None:
        params = QueryDict(mutable=True)
        params.update({"cluster": cluster.name, "namespace": CLUSTER_TOKEN, "model": str(resource.pk)})
        if resource.kind == Kind.BASE_MODEL:
            params["namespace"] = namespace_token(resource.namespace)
        context.update(matrix_context(request, params), embedded=True)
        if attempt.runtime:
            context["runtime"] = _runtime_from_reference(cluster, attempt.runtime, scope)
    return render(request, "patches/patch_result.html", context)


def _runtime_from_id(cluster: Cluster, value: str | None, scope: Scope) -> Resource | str | None:
    """The runtime a preview was planned for, so the audit log names it (kind and name); the
    raw value when it names no runtime of the cluster (patch_apply records it as sent)."""
    if not value:
        return None
    runtimes = resources_visible(scope).filter(cluster=cluster, kind__in=RUNTIME_KINDS)
    found = runtimes.filter(pk=value).first() if value.isdigit() else None
    return found if found is not None else value


def _runtime_from_reference(cluster: Cluster, reference: str, scope: Scope) -> Resource | None:
    try:
        return patches.runtime_get(cluster, reference, scope=scope)
    except PatchError:
        return None


@require_http_methods(["GET", "HEAD", "POST"])
@read_access
@throttled("model-index")
def model_index(request: HttpRequest, pk: int) -> HttpResponse:
    """Paste or upload a model_index.json and get the diffusionPipeline OME would record from it
    (nothing is written here; the preview link leads to the patch page)."""
    resource = model_or_404(pk, scope=scope_of(request))
    context: dict[str, Any] = {"cluster": resource.cluster, "model": resource}
    status = 200
    if request.method == "POST":
        upload = request.FILES.get("file")
        text = request.POST.get("text", "")
        context["text"] = text
        try:
            pipeline = patches.pipeline_from_upload(upload if upload is not None else text)
        except PatchError as error:
            context["error"] = error
            status = 400
        else:
            context["pipeline"] = pipeline
            context["pipeline_yaml"] = to_yaml({"diffusionPipeline": pipeline})
            context["preview_query"] = QueryDict(mutable=True)
            context["preview_query"]["pipeline"] = json.dumps(pipeline, separators=(",", ":"))
    return render(request, "patches/model_index.html", context, status=status)
