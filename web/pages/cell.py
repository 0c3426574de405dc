"""One cell's page: its explanation, and the one line the matrix's status bar shows."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

import matching
from access.current import scope_of
from access.scope import Scope
from core.web import namespace_from_token, namespace_token, poll_seconds, read_access
from inventory.models import Resource
from inventory.parsed import pipeline_plan, unusable_from
from inventory.selectors import model_or_404, runtime_or_404
from matrix.cells import MATCH_STATUSES, ranked_of
from matrix.selectors import cell_get, cell_reason, cell_trace, current_build, matrix_version


def _cell_objects(model_id: int, runtime_id: int, token: str, reader: Scope) -> tuple[Resource, Resource, str]:
    model, runtime = model_or_404(model_id, scope=reader), runtime_or_404(runtime_id, scope=reader)
    if model.cluster_id != runtime.cluster_id:
        raise Http404("the model and the runtime belong to different clusters")
    return model, runtime, namespace_from_token(token)


@require_safe
@read_access
def cell(request: HttpRequest, model_id: int, runtime_id: int, scope: str) -> HttpResponse:
    """The explanation of one cell: every entry, every check with both values, OME's reason, the
    score arithmetic and, where a pipeline patch can make it match, the patch button."""
    reader = scope_of(request)
    model, runtime, namespace = _cell_objects(model_id, runtime_id, scope, reader)
    cluster = model.cluster
    build = current_build(cluster)
    found = None if build is None else cell_get(build, model=model, runtime=runtime, namespace=namespace, scope=reader)
    if build is not None and found is None:
        raise Http404(f"{runtime} is not in the scope of {model}'s row in namespace {namespace or '(cluster scope)'}")
    matches = found is not None and found.status in MATCH_STATUSES
    trace = cell_trace(cluster, model.key, runtime.key, scope=reader)
    try:
        plan = pipeline_plan(model, runtime)
    except matching.ManifestError:
        plan = None
    context = {
        "cluster": cluster,
        "model": model,
        "runtime": runtime,
        "namespace": namespace,
        "scope": namespace_token(namespace),
        "build": build,
        "cell": found,
        "reason": None if matches else cell_reason(cluster, model.key, runtime.key, namespace, scope=reader),
        "trace": trace,
        "entries": [] if trace is None else list(zip(trace.check.entries, trace.breakdown, trace.weights, strict=True)),
        "crd_weight": matching.CRD_DEFAULT_WEIGHT,
        "row_ranked": [] if found is None else ranked_of(found.row.compatible),
        "plan": plan,
        "unusable": unusable_from(model, namespace),
        "version": matrix_version(cluster),
        "poll_seconds": poll_seconds(),
    }
    return render(request, "matrix/cell.html", context)


@require_safe
@read_access
def cell_reason_line(request: HttpRequest, model_id: int, runtime_id: int, scope: str) -> HttpResponse:
    """One line for the matrix's status bar: the cell, its status and OME's reason."""
    reader = scope_of(request)
    model, runtime, namespace = _cell_objects(model_id, runtime_id, scope, reader)
    build = current_build(model.cluster)
    found = None if build is None else cell_get(build, model=model, runtime=runtime, namespace=namespace, scope=reader)
    if found is None:
        raise Http404("no such cell")
    reason = None
    if found.status not in MATCH_STATUSES:
        reason = cell_reason(model.cluster, model.key, runtime.key, namespace, scope=reader)
    return render(request, "matrix/cell.html#reason-line", {"cell": found, "reason": reason})
