"""The what-if of an edited runtime manifest, on the runtime page: computed, never applied."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from core.throttle import throttled
from core.web import is_partial, read_access
from inventory.selectors import runtime_or_404
from matrix.views.runtime import runtime_context

from .errors import WhatIfError
from .services import whatif


@require_http_methods(["POST"])
@read_access
@throttled("whatif")
def runtime_whatif(request: HttpRequest, pk: int) -> HttpResponse:
    """The what-if of an edited manifest: computed, never applied (POST only because the text
    is long)."""
    resource = runtime_or_404(pk)
    text = request.POST.get("manifest", "")
    context: dict[str, Any] = {"runtime": resource, "submitted": text}
    status = 200
    try:
        context["whatif"] = whatif(resource.cluster, text)
    except WhatIfError as error:
        context["whatif_error"] = str(error)
        status = 400
    if is_partial(request):
        return render(request, "matrix/runtime.html#whatif", context, status=status)
    full = {**runtime_context(resource), **context, "manifest": text}
    return render(request, "matrix/runtime.html", full, status=status)
