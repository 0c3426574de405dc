"""What-if pages: the what-if of an edited runtime manifest (on the runtime page), and a
model's near misses with their fixes. Computed, never applied."""

from __future__ import annotations

import json
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods, require_safe

import matching
from access.current import scope_of
from access.scope import Scope
from core.throttle import throttled
from core.web import is_partial, namespace_from_token, namespace_token, read_access
from inventory.models import Resource
from inventory.parsed import inventory_for
from inventory.selectors import model_or_404, resources_visible, runtime_or_404
from web.pages.runtime import editable_manifest, runtime_context
from whatif.changes import grouped_changes
from whatif.errors import WhatIfError
from whatif.fixes import model_near_misses
from whatif.services import whatif

SHOWN_IN_FULL = 10
MAX_FIX_PATCHES = 2  # a fix changes the model, the runtime, or both
"""The closest near misses are shown with their checks and fixes; the others in a short list."""


def _fix_manifest(resource: Resource, text: str, scope: Scope) -> str:
    """The manifests a fix's patches (JSON, as a near miss lists them) make of the stored
    objects of the runtime's cluster, as YAML documents to edit."""
    try:
        patches = json.loads(text)
    except ValueError:
        raise WhatIfError("the fix is not valid JSON", field="fix") from None
    if not isinstance(patches, list) or not all(isinstance(item, dict) for item in patches):
        raise WhatIfError("the fix must be a list of object patches", field="fix")
    if len(patches) > MAX_FIX_PATCHES:
        raise WhatIfError(f"a fix patches at most {MAX_FIX_PATCHES} objects", field="fix")
    documents = []
    for patch in patches:
        identity = [patch.get(name) or "" for name in ("kind", "namespace", "name")]
        if not all(isinstance(part, str) for part in identity):
            raise WhatIfError("each object patch names its kind, namespace and name as text", field="fix")
        kind, namespace, name = identity
        found = resources_visible(scope).filter(cluster=resource.cluster, kind=kind, namespace=namespace, name=name)
        target = found.first()
        if target is None:
            raise WhatIfError(f"{kind} {name} is not in the cluster", field="fix")
        try:
            documents.append(matching.json_patch(target.obj, patch.get("operations") or []))
        except ValueError as error:
            raise WhatIfError(f"the fix does not apply: {error}", field="fix") from None
    return "---\n".join(editable_manifest(document) for document in documents)


@require_http_methods(["POST"])
@read_access
@throttled("whatif")
def runtime_whatif(request: HttpRequest, pk: int) -> HttpResponse:
    """The what-if of an edited manifest, or of a fix (`fix`: its patches, filled into the
    manifest box): computed, never applied (POST only because the text is long)."""
    scope = scope_of(request)
    resource = runtime_or_404(pk, scope=scope)
    text = request.POST.get("manifest", "")
    lenient = request.POST.get("lenient") == "on"
    context: dict[str, Any] = {"runtime": resource, "lenient": lenient}
    status = 200
    try:
        if request.POST.get("fix"):
            text = _fix_manifest(resource, request.POST["fix"], scope)
        result = whatif(resource.cluster, text, lenient=lenient, scope=scope)
        ids = inventory_for(resource.cluster, scope=scope).ids
        context.update(whatif=result, whatif_changes=grouped_changes(result, ids))
    except WhatIfError as error:
        context["whatif_error"] = str(error)
        context["whatif_problems"] = getattr(error, "problems", [])
        status = 400
    context["submitted"] = text
    if is_partial(request):
        return render(request, "matrix/runtime.html#whatif", context, status=status)
    full = {**runtime_context(resource, scope=scope), **context, "manifest": text}
    return render(request, "matrix/runtime.html", full, status=status)


@require_safe
@read_access
def near_misses(request: HttpRequest, pk: int) -> HttpResponse:
    """A model's near misses in one namespace (`namespace`, default the model's), closest
    first, each with its fixes and what they would change; only `runtime` when given."""
    scope = scope_of(request)
    model = model_or_404(pk, scope=scope)
    default = model.namespace if model.kind == "BaseModel" else ""
    namespace = namespace_from_token(request.GET["namespace"]) if request.GET.get("namespace") else default
    runtime_id = request.GET.get("runtime", "")
    runtime = runtime_or_404(int(runtime_id), scope=scope) if runtime_id.isdigit() else None
    if runtime is not None and runtime.cluster_id != model.cluster_id:
        raise Http404("the model and the runtime belong to different clusters")
    context: dict[str, Any] = {
        "model": model,
        "cluster": model.cluster,
        "namespace": namespace,
        "scope": namespace_token(namespace),
        "only_runtime": runtime,
    }
    found = model_near_misses(model, namespace, runtime, scope=scope)
    misses = found.misses
    context.update(
        misses=misses[:SHOWN_IN_FULL], further=misses[SHOWN_IN_FULL:], ranked=found.ranked, unserved=found.unserved
    )
    template = "whatif/near_misses.html#misses" if is_partial(request) else "whatif/near_misses.html"
    return render(request, template, context)
