"""The dashboard's HTML pages: matrix, cell explanation, model, runtime, InferenceServices, lint,
and the one-click pipeline patch. Views are thin: they bind the shared FilterSets to the query,
call selectors (reads) and `patches.services` (every write), and render one template per page
whose `{% partialdef %}`s answer htmx requests.

Reads are open while settings.API_ANONYMOUS_READ is on, as for the API; otherwise they need a
login. Applying a patch always needs a login and the `patches.apply_pipeline_patch` permission
(checked by `patches.services.patch_apply`, which records every attempt).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any, TypeVar

import yaml
from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString
from django.views.decorators.http import require_http_methods, require_safe
from django_filters import rest_framework as filters

from inventory.filters import CLUSTER_SCOPE, InferenceServiceFilterSet, ModelFilterSet
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Kind, Resource
from inventory.selectors import field_managers
from patches import services as patches
from patches.errors import PatchError, PatchInvalid
from patches.models import APPLY_PERMISSION, PatchAttempt

from .filters import CellFilterSet
from .isvcs import isvc_verdicts
from .models import CellStatus, MatrixBuild, MatrixRow
from .selectors import (
    GridPage,
    MatrixMissing,
    cell_get,
    cell_reason,
    cell_trace,
    current_build,
    isvc_at_risk,
    lint_report_get,
    matrix_grid,
    matrix_namespaces,
    matrix_summary,
    matrix_version,
    model_facets,
    model_history,
    model_isvcs,
    model_ranking,
    model_rows,
    parsed_object,
    pipeline_fixable,
    runtime_matches,
)
from .whatif import WhatIfError, whatif

View = TypeVar("View", bound=Callable[..., HttpResponse])

# The legend, in the order the statuses rank.
LEGEND = [
    (CellStatus.SELECTED.value, "selected", "OME's pick for the model in this namespace"),
    (CellStatus.COMPATIBLE.value, "compatible", "matches and can be auto-selected, but ranks lower"),
    (CellStatus.MANUAL_ONLY.value, "manual-only", "matches, but only when an InferenceService names it"),
    (CellStatus.EXCLUDED.value, "excluded", "does not match the model (hover or focus for OME's reason)"),
    (CellStatus.DISABLED.value, "disabled", "the runtime is disabled"),
]
# The fields of inventory.filters.ModelFilterSet the matrix form offers (its namespace would filter
# the models' own namespace, not the rows': the matrix takes the namespace from CellFilterSet).
MODEL_FILTER_FIELDS = (
    "kind",
    "model_format",
    "model_architecture",
    "pipeline_class",
    "has_pipeline",
    "storage_scheme",
    "search",
)


def poll_seconds() -> float:
    """How often pages poll the matrix version (htmx `every`), so that a sync or a patch shows
    up by itself: settings.MATRIX_POLL_SECONDS, default 3."""
    return float(getattr(settings, "MATRIX_POLL_SECONDS", 3))


def read_access(view: View) -> View:
    """Let anyone read while settings.API_ANONYMOUS_READ is on (as the API does); otherwise send
    anonymous users to the login page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not getattr(settings, "API_ANONYMOUS_READ", True) and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapped  # type: ignore[return-value]


def scope_token(namespace: str) -> str:
    """A namespace as it travels in URLs: `_cluster` for cluster scope (the empty namespace)."""
    return namespace or CLUSTER_SCOPE


def scope_namespace(token: str | None) -> str:
    return "" if not token or token == CLUSTER_SCOPE else token


def _partial(request: HttpRequest) -> bool:
    """An htmx request for a fragment (not a boosted page load)."""
    htmx = getattr(request, "htmx", None)
    return htmx is not None and bool(htmx) and not htmx.boosted


def _cluster_or_404(name: str | None) -> Cluster:
    if name:
        return get_object_or_404(Cluster, name=name)
    cluster = Cluster.objects.order_by("name").first()
    if cluster is None:
        raise Http404("no cluster is registered")
    return cluster


def _model_or_404(pk: int) -> Resource:
    return get_object_or_404(Resource.objects.select_related("cluster"), pk=pk, kind__in=MODEL_KINDS)


def _runtime_or_404(pk: int) -> Resource:
    return get_object_or_404(Resource.objects.select_related("cluster"), pk=pk, kind__in=RUNTIME_KINDS)


def _yaml(obj: object) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)


# ---- matrix ----------------------------------------------------------------------------------


class MatrixFilterSet(CellFilterSet):
    """The API's cell FilterSet, plus the row outcome the matrix's counts link to."""

    outcome = filters.ChoiceFilter(choices=MatrixRow.Outcome.choices, help_text="Row outcome.")


def _model_filter(params: QueryDict, cluster: Cluster) -> ModelFilterSet:
    data = QueryDict(mutable=True)
    for name in MODEL_FILTER_FIELDS:
        if params.get(name):
            data.setlist(name, params.getlist(name))
    return ModelFilterSet(data, queryset=Resource.objects.filter(cluster=cluster, kind__in=MODEL_KINDS))


def matrix_context(params: QueryDict) -> dict[str, Any]:
    """Everything the matrix template needs for a query; `error` says why there is no grid."""
    clusters = list(Cluster.objects.order_by("name"))
    context: dict[str, Any] = {"clusters": clusters, "legend": LEGEND, "poll_seconds": poll_seconds()}
    if not clusters:
        return {**context, "error": "no-cluster"}
    params = params.copy()
    if not params.get("cluster"):
        params["cluster"] = clusters[0].name
    if not params.get("namespace"):
        params["namespace"] = CLUSTER_SCOPE
    cells = MatrixFilterSet(params, queryset=MatrixRow.objects.all())
    context.update(params=params, cells_filter=cells)
    if not cells.is_valid():
        return {**context, "error": "invalid"}
    cluster: Cluster = cells.form.cleaned_data["cluster"]
    models = _model_filter(params, cluster)
    namespace = scope_namespace(cells.form.cleaned_data.get("namespace"))
    context.update(
        cluster=cluster,
        namespace=namespace,
        scope=scope_token(namespace),
        models_filter=models,
        facets=model_facets(cluster),
        version=matrix_version(cluster),
    )
    if not models.is_valid():
        return {**context, "error": "invalid"}
    try:
        rows: QuerySet[MatrixRow] = cells.qs
    except MatrixMissing as error:
        return {**context, "error": "no-matrix", "error_text": str(error)}
    if any(params.get(name) for name in MODEL_FILTER_FIELDS):
        rows = rows.filter(model__in=models.qs.values("pk"))
    grid = matrix_grid(
        cells.build,
        rows,
        namespace=namespace,
        statuses=cells.form.cleaned_data.get("status") or (),
        page=params.get("page"),
        column_page=params.get("cpage"),
        columns_mode=params.get("cols", "page"),
        runtime_ids=cells.runtime_ids(),
    )
    cell_base = reverse("compat:cell", args=[1, 1, "x"]).removesuffix("1/1/x/")
    return {
        **context,
        "build": cells.build,
        "grid": grid,
        "grid_rows": grid_rows_html(grid, cell_base, scope_token(namespace)),
        "namespaces": matrix_namespaces(cells.build),
        "matrix_url": f"{reverse('compat:matrix')}?{params.urlencode()}",
    }


CELL_TEXT = {CellStatus.MANUAL_ONLY.value: "M", CellStatus.DISABLED.value: "\u2013"}


def grid_rows_html(grid: GridPage, cell_base: str, scope: str) -> list[tuple[MatrixRow, SafeString]]:
    """The cells of each row of a grid page as HTML, built here rather than in the template: a
    page has thousands of cells and the template engine takes tens of microseconds per variable.

    A cell is `<td class="s-STATUS"><a class="cell" href="/cells/MODEL/RUNTIME/SCOPE/"
    aria-label="MODEL \u00d7 RUNTIME: STATUS, score N">TEXT</a></td>`, assembled from pieces made by
    format_html (every value escaped, names included) and cached per status, column and row, so a
    cell costs a few concatenations of safe strings."""
    opening = {status: format_html('<td class="s-{}"><a class="cell" href="', status) for status in CellStatus.values}
    middles = {runtime.pk: format_html('{}/{}/" aria-label="', runtime.pk, scope) for runtime in grid.columns}
    names = {runtime.pk: runtime.name for runtime in grid.columns}
    endings: dict[tuple[int, str, int | None], SafeString] = {}
    rows = []
    for row, cells in grid.rows:
        prefix = escape(f"{cell_base}{row.model.pk}/")
        model_name = escape(row.model.name)
        parts: list[SafeString] = []
        for cell in cells:
            key = (cell.runtime.pk, cell.status, cell.score)
            ending = endings.get(key)
            if ending is None:
                ending = endings[key] = format_html(
                    ' \u00d7 {}: {}{}">{}</a></td>',
                    names[cell.runtime.pk],
                    cell.status,
                    "" if cell.score is None else f", score {cell.score}",
                    cell.score if cell.score is not None else CELL_TEXT.get(cell.status, "\u00b7"),
                )
            parts += (opening[cell.status], prefix, middles[cell.runtime.pk], model_name, ending)
        # One format_html per row over pieces that are all safe already: the format string is
        # only placeholders, and conditional_escape leaves safe strings as they are.
        rows.append((row, format_html("{}" * len(parts), *parts)))
    return rows


@require_safe
@read_access
def matrix(request: HttpRequest) -> HttpResponse:
    context = matrix_context(request.GET)
    status = 400 if context.get("error") == "invalid" else 200
    template = "compat/matrix.html#grid" if _partial(request) else "compat/matrix.html"
    return render(request, template, context, status=status)


@require_safe
@read_access
def matrix_counts(request: HttpRequest) -> HttpResponse:
    """The counts at the top of the matrix (loaded after the grid: the lint takes a while once)."""
    cluster = _cluster_or_404(request.GET.get("cluster"))
    namespace = scope_namespace(request.GET.get("namespace"))
    build = current_build(cluster)
    summary = None if build is None else matrix_summary(cluster, build, namespace)
    context = {"cluster": cluster, "namespace": namespace, "scope": scope_token(namespace), "summary": summary}
    return render(request, "compat/matrix.html#counts", context)


@require_safe
@read_access
def matrix_version_poll(request: HttpRequest) -> HttpResponse:
    """Polled by pages that show the matrix: 204 while the version the page shows (`since`) is
    current; otherwise the new poller and an HX-Trigger `matrix-changed` so the page refreshes."""
    cluster = _cluster_or_404(request.GET.get("cluster"))
    version = matrix_version(cluster)
    if version == request.GET.get("since"):
        return HttpResponse(status=204)
    response = render(
        request,
        "base.html#version",
        {"cluster": cluster, "version": version, "poll_seconds": poll_seconds()},
    )
    response["HX-Trigger"] = "matrix-changed"
    return response


# ---- one cell -------------------------------------------------------------------------------


def _current_build(cluster: Cluster) -> MatrixBuild | None:
    """current_build, with its cluster set to the one in hand (saves reading it again)."""
    build = current_build(cluster)
    if build is not None:
        build.cluster = cluster
    return build


def _cell_objects(model_id: int, runtime_id: int, scope: str) -> tuple[Resource, Resource, str]:
    model, runtime = _model_or_404(model_id), _runtime_or_404(runtime_id)
    if model.cluster_id != runtime.cluster_id:
        raise Http404("the model and the runtime belong to different clusters")
    return model, runtime, scope_namespace(scope)


@require_safe
@read_access
def cell(request: HttpRequest, model_id: int, runtime_id: int, scope: str) -> HttpResponse:
    """The explanation of one cell: every entry, every check with both values, OME's reason, the
    score arithmetic and, where a pipeline patch can make it match, the patch button."""
    model, runtime, namespace = _cell_objects(model_id, runtime_id, scope)
    cluster = model.cluster
    build = _current_build(cluster)
    found = None if build is None else cell_get(build, model=model, runtime=runtime, namespace=namespace)
    if build is not None and found is None:
        raise Http404(f"{runtime} is not in the scope of {model}'s row in namespace {namespace or '(cluster scope)'}")
    status = found.status if found is not None else None
    matches = status in (CellStatus.SELECTED, CellStatus.COMPATIBLE)
    trace = cell_trace(cluster, model.key, runtime.key)
    try:
        plan = patches.patch_plan(cluster, model, runtime)
    except PatchError:
        plan = None
    context = {
        "cluster": cluster,
        "model": model,
        "runtime": runtime,
        "namespace": namespace,
        "scope": scope_token(namespace),
        "build": build,
        "cell": found,
        "reason": None if matches else cell_reason(cluster, model.key, runtime.key, namespace),
        "trace": trace,
        "entries": [] if trace is None else list(zip(trace.check.entries, trace.breakdown, strict=True)),
        "row_ranked": [] if found is None else found.row.compatible,
        "plan": plan,
        "version": matrix_version(cluster),
        "poll_seconds": poll_seconds(),
    }
    return render(request, "compat/cell.html", context)


@require_safe
@read_access
def cell_reason_line(request: HttpRequest, model_id: int, runtime_id: int, scope: str) -> HttpResponse:
    """One line for the matrix's status bar: the cell, its status and OME's reason."""
    model, runtime, namespace = _cell_objects(model_id, runtime_id, scope)
    build = _current_build(model.cluster)
    found = None if build is None else cell_get(build, model=model, runtime=runtime, namespace=namespace)
    if found is None:
        raise Http404("no such cell")
    reason = None
    if found.status not in (CellStatus.SELECTED, CellStatus.COMPATIBLE):
        reason = cell_reason(model.cluster, model.key, runtime.key, namespace)
    return render(request, "compat/cell.html#reason-line", {"cell": found, "reason": reason})


# ---- model ----------------------------------------------------------------------------------

PROVENANCE_UNKNOWN = (
    "Who set these fields cannot be told: the object carries no metadata.managedFields (a manifest "
    "folder, or an API server that does not report them)."
)


def _flatten(value: object, prefix: str = "") -> list[tuple[str, object]]:
    if isinstance(value, Mapping) and value:
        found: list[tuple[str, object]] = []
        for key, item in value.items():
            found += _flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return found
    return [(prefix, value)]


def _who(managers: list[str]) -> str:
    """OME's own controllers and agent, or someone else: managedFields name the writer, and
    OME's writers carry "ome" in their manager name; the raw names are shown alongside."""
    if not managers:
        return "not tracked"
    if any("ome" in manager.lower().split(" (")[0] for manager in managers):
        return "filled by OME"
    return "set by a user or another tool"


def pipeline_provenance(obj: Mapping[str, Any]) -> tuple[list[dict[str, object]], str | None]:
    """Each recorded diffusionPipeline field with who set it, and a note when it cannot be told."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    pipeline = spec.get("diffusionPipeline") if isinstance(spec, Mapping) else None
    if not isinstance(pipeline, Mapping) or not pipeline:
        return [], None
    owners = field_managers(obj, ("spec", "diffusionPipeline"))
    fields = []
    for path, value in _flatten(pipeline):
        if owners is None:
            fields.append({"path": path, "value": value, "managers": [], "who": None})
            continue
        managers = owners.get(path) or next(
            (names for owned, names in owners.items() if owned and path.startswith(owned + ".")), []
        )
        fields.append({"path": path, "value": value, "managers": managers, "who": _who(managers)})
    return fields, PROVENANCE_UNKNOWN if owners is None else None


@require_safe
@read_access
def model(request: HttpRequest, pk: int) -> HttpResponse:
    resource = _model_or_404(pk)
    cluster = resource.cluster
    build = current_build(cluster)
    rows = [] if build is None else model_rows(build, resource)
    default = resource.namespace if resource.kind == Kind.BASE_MODEL else ""
    namespace = scope_namespace(request.GET.get("namespace")) if request.GET.get("namespace") else default
    row = next((r for r in rows if r.namespace == namespace), None)
    parsed = parsed_object(cluster, resource)
    pipeline_fields, provenance_note = pipeline_provenance(resource.obj)
    context = {
        "cluster": cluster,
        "model": resource,
        "parsed": parsed,
        "invalid": resource.error,
        "rows": rows,
        "namespace": namespace,
        "scope": scope_token(namespace),
        "ranking": model_ranking(cluster, row, resource, namespace),
        "pipeline_fields": pipeline_fields,
        "provenance_note": provenance_note,
        "isvcs": model_isvcs(cluster, resource),
        "history": model_history(cluster, resource),
        "build": build,
        "version": matrix_version(cluster),
        "poll_seconds": poll_seconds(),
    }
    return render(request, "compat/model.html", context)


# ---- runtime --------------------------------------------------------------------------------

# Fields of a stored object that an edited copy should not carry back.
_SERVER_FIELDS = ("managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink")


def editable_manifest(obj: Mapping[str, Any]) -> str:
    """The object as YAML to edit: without status and the fields the API server sets."""
    copy = {key: value for key, value in obj.items() if key != "status"}
    metadata = copy.get("metadata")
    if isinstance(metadata, Mapping):
        copy["metadata"] = {key: value for key, value in metadata.items() if key not in _SERVER_FIELDS}
    return _yaml(copy)


def _runtime_context(resource: Resource) -> dict[str, Any]:
    cluster = resource.cluster
    entries, picked = runtime_matches(cluster, resource)
    return {
        "cluster": cluster,
        "runtime": resource,
        "parsed": parsed_object(cluster, resource),
        "entries": [
            (item, json.dumps(item.entry.pipeline.to_dict()) if item.entry.pipeline is not None else None)
            for item in entries
        ],
        "picked": picked,
        "findings": lint_report_get(cluster).for_runtime(resource.key),
        "manifest": editable_manifest(resource.obj),
        "version": matrix_version(cluster),
        "poll_seconds": poll_seconds(),
    }


@require_safe
@read_access
def runtime(request: HttpRequest, pk: int) -> HttpResponse:
    return render(request, "compat/runtime.html", _runtime_context(_runtime_or_404(pk)))


@require_http_methods(["POST"])
@read_access
def runtime_whatif(request: HttpRequest, pk: int) -> HttpResponse:
    """The what-if of an edited manifest: computed, never applied (POST only because the text
    is long)."""
    resource = _runtime_or_404(pk)
    text = request.POST.get("manifest", "")
    context: dict[str, Any] = {"runtime": resource, "submitted": text}
    status = 200
    try:
        context["whatif"] = whatif(resource.cluster, text)
    except WhatIfError as error:
        context["whatif_error"] = str(error)
        status = 400
    if _partial(request):
        return render(request, "compat/runtime.html#whatif", context, status=status)
    full = {**_runtime_context(resource), **context, "manifest": text}
    return render(request, "compat/runtime.html", full, status=status)


# ---- InferenceServices and lint -------------------------------------------------------------


@require_safe
@read_access
def isvcs(request: HttpRequest) -> HttpResponse:
    """Every InferenceService with what OME does with it today; `at_risk=1` keeps those it would
    not deploy, deploys with an advisory, or would decide differently than when it decided."""
    cluster = _cluster_or_404(request.GET.get("cluster")) if Cluster.objects.exists() else None
    if cluster is None:
        return render(request, "compat/matrix.html", {"error": "no-cluster", "clusters": []})
    found = InferenceServiceFilterSet(
        request.GET, queryset=Resource.objects.filter(cluster=cluster, kind=Kind.INFERENCE_SERVICE).defer("obj")
    )
    keys = {resource.key for resource in found.qs} if found.is_valid() else set()
    at_risk = request.GET.get("at_risk") in ("1", "true", "on")
    verdicts = [
        verdict for verdict in isvc_verdicts(cluster) if verdict.key in keys and (not at_risk or isvc_at_risk(verdict))
    ]
    verdicts.sort(key=lambda verdict: (not isvc_at_risk(verdict), verdict.namespace, verdict.name))
    models = {
        resource.key: resource.pk
        for resource in Resource.objects.filter(cluster=cluster, kind__in=MODEL_KINDS).only("kind", "namespace", "name")
    }
    runtimes = {
        resource.key: resource.pk
        for resource in Resource.objects.filter(cluster=cluster, kind__in=RUNTIME_KINDS).only(
            "kind", "namespace", "name"
        )
    }
    risky = [v for v in verdicts if isvc_at_risk(v) and v.model is not None and v.runtime is not None]
    fixable = pipeline_fixable(cluster, [(v.model, v.runtime) for v in risky if v.model and v.runtime])
    rows = [
        {
            "verdict": v,
            "at_risk": isvc_at_risk(v),
            "model_id": models.get(v.model) if v.model else None,
            "patch_runtime_id": runtimes.get(v.runtime) if (v.model, v.runtime) in fixable and v.runtime else None,
        }
        for v in verdicts
    ]
    context = {
        "cluster": cluster,
        "clusters": Cluster.objects.order_by("name"),
        "filter": found,
        "rows": rows,
        "at_risk": at_risk,
        "version": matrix_version(cluster),
        "poll_seconds": poll_seconds(),
    }
    return render(request, "compat/isvcs.html", context)


@require_safe
@read_access
def lint(request: HttpRequest) -> HttpResponse:
    cluster = _cluster_or_404(request.GET.get("cluster")) if Cluster.objects.exists() else None
    if cluster is None:
        return render(request, "compat/matrix.html", {"error": "no-cluster", "clusters": []})
    report = lint_report_get(cluster)
    severity = request.GET.get("severity", "")
    findings = [f for f in report.findings if not severity or f.severity == severity]
    keys = {key for finding in findings for key in (*finding.runtimes, *finding.models)}
    ids = {
        resource.key: resource.pk
        for resource in Resource.objects.filter(cluster=cluster, name__in={key[2] for key in keys}).only(
            "kind", "namespace", "name"
        )
    }
    context = {
        "cluster": cluster,
        "clusters": Cluster.objects.order_by("name"),
        "counts": report.counts(),
        "severity": severity,
        "findings": [
            {
                "finding": finding,
                "runtimes": [(key, ids.get(key)) for key in finding.runtimes],
                "models": [(key, ids.get(key)) for key in finding.models],
            }
            for finding in findings
        ],
    }
    return render(request, "compat/lint.html", context)


# ---- the one-click pipeline patch --------------------------------------------------------------


def yaml_diff(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A unified diff of two objects as YAML: (kind, line) with kind "add", "del", "hunk" or ""."""
    lines = difflib.unified_diff(
        _yaml(before).splitlines(), _yaml(after).splitlines(), "before", "after", lineterm="", n=4
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


def _preview_context(cluster: Cluster, preview: patches.PatchPreview) -> dict[str, Any]:
    return {
        "cluster": cluster,
        "model": preview.model,
        "preview": preview,
        "patch_json": json.dumps(preview.patch, indent=2) if preview.patch is not None else "",
        "patch_compact": json.dumps(preview.patch, separators=(",", ":")) if preview.patch is not None else "",
        "diff_lines": yaml_diff(preview.before, preview.after),
        "before_yaml": _yaml(preview.before),
        "after_yaml": _yaml(preview.after),
        "row_changes": _row_changes(preview.matrix_diff),
        "apply_permission": APPLY_PERMISSION,
    }


@require_http_methods(["GET", "HEAD", "POST"])
@read_access
def patch(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the preview of a diffusionPipeline patch ("Make this model match"). POST: apply it
    through patches.services.patch_apply, then show the result (redirect) or say plainly why not."""
    resource = _model_or_404(pk)
    cluster = resource.cluster
    if request.method == "POST":
        return _patch_apply(request, cluster, resource)
    try:
        preview = patches.patch_preview(cluster, model=resource.pk, **_preview_source(request))
    except PatchError as error:
        return render(request, "compat/patch.html", {"cluster": cluster, "model": resource, "error": error}, status=400)
    return render(request, "compat/patch.html", _preview_context(cluster, preview))


def _patch_apply(request: HttpRequest, cluster: Cluster, resource: Resource) -> HttpResponse:
    if not request.user.is_authenticated:
        # Back to the preview after signing in: the POST itself cannot be replayed.
        query = QueryDict(mutable=True)
        if request.POST.get("runtime"):
            query["runtime"] = request.POST["runtime"]
        preview = reverse("compat:patch", args=[resource.pk])
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
        runtime=_runtime_from_id(cluster, request.POST.get("runtime")),
    )
    if outcome.ok:
        return redirect("compat:patch-result", pk=outcome.attempt.pk)
    context: dict[str, Any] = {"cluster": cluster, "model": resource, "outcome": outcome}
    if outcome.result == PatchAttempt.Result.CONFLICT:
        # Show what is there now, so the user can decide again.
        source = {"runtime": request.POST.get("runtime")} if request.POST.get("runtime") else {"patch": body}
        try:
            context.update(_preview_context(cluster, patches.patch_preview(cluster, model=resource.pk, **source)))
        except PatchError as error:
            context["error"] = error
        context["outcome"] = outcome
    return render(request, "compat/patch.html", context, status=outcome.http_status)


@require_safe
def patch_result(request: HttpRequest, pk: int) -> HttpResponse:
    """What an apply did, and the model's refreshed row of the matrix (it refreshes itself when
    the matrix update lands, which a Celery worker may do a moment later)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    attempt = get_object_or_404(PatchAttempt, pk=pk)
    if attempt.user_id != request.user.pk and not request.user.has_perm("patches.view_patchattempt"):
        raise PermissionDenied("only the user who applied a patch (or one who may view the audit log) sees its result")
    cluster = Cluster.objects.filter(name=attempt.cluster_name).first()
    resource = None
    if cluster is not None:
        resource = Resource.objects.filter(
            cluster=cluster, kind=attempt.model_kind, namespace=attempt.model_namespace, name=attempt.model_name
        ).first()
    context: dict[str, Any] = {
        "attempt": attempt,
        "cluster": cluster,
        "model": resource,
        "patch_json": json.dumps(attempt.patch, indent=2),
    }
    if cluster is not None and resource is not None:
        params = QueryDict(mutable=True)
        params.update({"cluster": cluster.name, "namespace": CLUSTER_SCOPE, "model": str(resource.pk)})
        if resource.kind == Kind.BASE_MODEL:
            params["namespace"] = scope_token(resource.namespace)
        context.update(matrix_context(params), embedded=True)
        if attempt.runtime:
            context["runtime"] = _runtime_from_reference(cluster, attempt.runtime)
    return render(request, "compat/patch_result.html", context)


def _runtime_from_id(cluster: Cluster, value: str | None) -> Resource | str | None:
    """The runtime a preview was planned for, so the audit log names it (kind and name); the
    raw value when it names no runtime of the cluster (patch_apply records it as sent)."""
    if not value:
        return None
    found = (
        Resource.objects.filter(cluster=cluster, kind__in=RUNTIME_KINDS, pk=value).first() if value.isdigit() else None
    )
    return found if found is not None else value


def _runtime_from_reference(cluster: Cluster, reference: str) -> Resource | None:
    try:
        return patches.runtime_get(cluster, reference)
    except PatchError:
        return None


@require_http_methods(["GET", "HEAD", "POST"])
@read_access
def model_index(request: HttpRequest, pk: int) -> HttpResponse:
    """Paste or upload a model_index.json and get the diffusionPipeline OME would record from it
    (nothing is written here; the preview link leads to the patch page)."""
    resource = _model_or_404(pk)
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
            context["pipeline_yaml"] = _yaml({"diffusionPipeline": pipeline})
            context["preview_query"] = QueryDict(mutable=True)
            context["preview_query"]["pipeline"] = json.dumps(pipeline, separators=(",", ":"))
    return render(request, "compat/model_index.html", context, status=status)
