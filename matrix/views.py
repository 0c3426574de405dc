"""The matrix's HTML pages: the matrix, one cell's explanation, a model, a runtime, and the
InferenceServices with what OME does with each today (it polls the matrix and links to the
pipeline patches its rows can take). Views are thin: they bind the shared FilterSets to the
query, call selectors, and render one template per page whose `{% partialdef %}`s answer htmx
requests. Reads are open while settings.API_ANONYMOUS_READ is on, as for the API; otherwise
they need a login.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString
from django.views.decorators.http import require_safe
from django_filters import rest_framework as filters

import matching
from core.web import CLUSTER_SCOPE, is_partial, poll_seconds, read_access, scope_namespace, scope_token, to_yaml
from inventory.filters import InferenceServiceFilterSet, ModelFilterSet
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Kind, Resource
from inventory.parsed import load_inventory, pipeline_fixable
from inventory.selectors import cluster_for_page, field_managers, model_or_404, runtime_or_404
from isvcs.services import isvc_at_risk, isvc_verdicts
from lint.selectors import lint_report_get

from .filters import CellFilterSet
from .models import CellStatus, MatrixBuild, MatrixRow
from .selectors import (
    GridPage,
    MatrixMissing,
    cell_get,
    cell_reason,
    cell_trace,
    current_build,
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
    pipeline_plan,
    runtime_matches,
)

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
    cell_base = reverse("matrix:cell", args=[1, 1, "x"]).removesuffix("1/1/x/")
    return {
        **context,
        "build": cells.build,
        "grid": grid,
        "grid_rows": grid_rows_html(grid, cell_base, scope_token(namespace)),
        "namespaces": matrix_namespaces(cells.build),
        "matrix_url": f"{reverse('matrix:matrix')}?{params.urlencode()}",
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
    template = "matrix/matrix.html#grid" if is_partial(request) else "matrix/matrix.html"
    return render(request, template, context, status=status)


@require_safe
@read_access
def matrix_counts(request: HttpRequest) -> HttpResponse:
    """The counts at the top of the matrix (loaded after the grid: the lint takes a while once)."""
    cluster = cluster_for_page(request.GET.get("cluster"))
    namespace = scope_namespace(request.GET.get("namespace"))
    build = current_build(cluster)
    summary = None if build is None else matrix_summary(cluster, build, namespace)
    context = {"cluster": cluster, "namespace": namespace, "scope": scope_token(namespace), "summary": summary}
    return render(request, "matrix/matrix.html#counts", context)


@require_safe
@read_access
def matrix_version_poll(request: HttpRequest) -> HttpResponse:
    """Polled by pages that show the matrix: 204 while the version the page shows (`since`) is
    current; otherwise the new poller and an HX-Trigger `matrix-changed` so the page refreshes."""
    cluster = cluster_for_page(request.GET.get("cluster"))
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
    model, runtime = model_or_404(model_id), runtime_or_404(runtime_id)
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
        plan = pipeline_plan(model, runtime)
    except matching.ManifestError:
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
    return render(request, "matrix/cell.html", context)


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
    return render(request, "matrix/cell.html#reason-line", {"cell": found, "reason": reason})


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
    resource = model_or_404(pk)
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
    return render(request, "matrix/model.html", context)


# ---- runtime --------------------------------------------------------------------------------

# Fields of a stored object that an edited copy should not carry back.
_SERVER_FIELDS = ("managedFields", "resourceVersion", "uid", "generation", "creationTimestamp", "selfLink")


def editable_manifest(obj: Mapping[str, Any]) -> str:
    """The object as YAML to edit: without status and the fields the API server sets."""
    copy = {key: value for key, value in obj.items() if key != "status"}
    metadata = copy.get("metadata")
    if isinstance(metadata, Mapping):
        copy["metadata"] = {key: value for key, value in metadata.items() if key not in _SERVER_FIELDS}
    return to_yaml(copy)


def runtime_context(resource: Resource) -> dict[str, Any]:
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
    return render(request, "matrix/runtime.html", runtime_context(runtime_or_404(pk)))


# ---- InferenceServices and lint -------------------------------------------------------------


@require_safe
@read_access
def isvcs(request: HttpRequest) -> HttpResponse:
    """Every InferenceService with what OME does with it today; `at_risk=1` keeps those it would
    not deploy, deploys with an advisory, or would decide differently than when it decided."""
    cluster = cluster_for_page(request.GET.get("cluster")) if Cluster.objects.exists() else None
    if cluster is None:
        return render(request, "matrix/matrix.html", {"error": "no-cluster", "clusters": []})
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
    fixable = pipeline_fixable(load_inventory(cluster), [(v.model, v.runtime) for v in risky if v.model and v.runtime])
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
    return render(request, "isvcs/isvcs.html", context)
