"""A runtime's page: its entries with the models each matches, its lint findings, its manifest."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from access.current import scope_of
from access.scope import Scope
from core.redact import redacted
from core.web import editable_manifest, poll_seconds, read_access
from inventory.models import Resource
from inventory.selectors import runtime_or_404
from lint.selectors import lint_report_get
from matching import Runtime
from matrix.selectors import matrix_version
from web.rankings import parsed_object, runtime_matches


def size_range_text(runtime: object) -> str:
    """A runtime's modelSizeRange as a person writes it: "1B to 13B", "at least 1B", "at most
    13B"; "" for a model (or a runtime without a range)."""
    if not isinstance(runtime, Runtime) or runtime.size_range is None:
        return ""
    low, high = runtime.size_range.min_text, runtime.size_range.max_text
    if low is not None and high is not None:
        return f"{low} to {high}"
    if low is not None:
        return f"at least {low} (no max)"
    if high is not None:
        return f"at most {high} (no min)"
    return "any size (neither min nor max is set)"


def runtime_context(resource: Resource, *, scope: Scope) -> dict[str, Any]:
    cluster = resource.cluster
    entries, picked = runtime_matches(cluster, resource, scope=scope)
    parsed = parsed_object(cluster, resource, scope=scope)
    return {
        "cluster": cluster,
        "runtime": resource,
        "parsed": parsed,
        "size_range": size_range_text(parsed),
        "entries": [
            (item, json.dumps(item.entry.pipeline.to_dict()) if item.entry.pipeline is not None else None)
            for item in entries
        ],
        "picked": picked,
        "findings": lint_report_get(cluster, scope=scope).for_runtime(resource.key),
        "manifest": editable_manifest(resource.obj),
        "manifest_redacted": redacted(resource.obj),
        "version": matrix_version(cluster),
        "poll_seconds": poll_seconds(),
    }


@require_safe
@read_access
def runtime(request: HttpRequest, pk: int) -> HttpResponse:
    scope = scope_of(request)
    return render(request, "matrix/runtime.html", runtime_context(runtime_or_404(pk, scope=scope), scope=scope))
