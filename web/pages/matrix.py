"""The matrix page: the grid of one namespace, its counts, and the version poll of every page
that shows the matrix."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.views.decorators.http import require_safe

from access.current import scope_of
from core.web import (
    ALL_NAMESPACES,
    CLUSTER_TOKEN,
    is_partial,
    namespace_from_token,
    namespace_token,
    poll_seconds,
    read_access,
)
from inventory.models import Cluster
from inventory.selectors import cluster_or_404, clusters_visible
from matrix.cells import OUT_OF_SCOPE
from matrix.counts import ACROSS
from matrix.filters import CellFilterSet, NamespaceUnknown
from matrix.models import CellStatus, MatrixRow
from matrix.outcomes import OUTCOME_CHOICES
from matrix.selectors import MatrixMissing, current_build, matrix_namespaces, matrix_version, rows_visible
from web.grid import GridPage, matrix_grid, matrix_summary, model_facets

# The legend, in the order the statuses rank.
LEGEND = [
    (CellStatus.SELECTED.value, "selected", "OME's pick for the model in this namespace"),
    (CellStatus.COMPATIBLE.value, "compatible", "matches and can be auto-selected, but ranks lower"),
    (CellStatus.MANUAL_ONLY.value, "manual-only", "matches, but only when an InferenceService names it"),
    (CellStatus.EXCLUDED.value, "excluded", "does not match the model (hover or focus for OME's reason)"),
    (CellStatus.DISABLED.value, "disabled", "the runtime is disabled"),
]


def page_namespace(token: str | None) -> str | None:
    """The namespace a matrix query shows: None (`matrix.counts.ACROSS`) for `_all`."""
    return ACROSS if token == ALL_NAMESPACES else namespace_from_token(token)


def page_token(namespace: str | None) -> str:
    return ALL_NAMESPACES if namespace is ACROSS else namespace_token(namespace)


def export_query(params: QueryDict) -> str:
    """The page's query as far as the cells API takes it (the API's filters, the same
    FilterSet's): the export link exports what the grid shows."""
    kept = QueryDict(mutable=True)
    for name in CellFilterSet.base_filters:
        if params.get(name):
            kept.setlist(name, params.getlist(name))
    return kept.urlencode()


def matrix_context(request: HttpRequest, params: QueryDict, *, chosen: str | None = None) -> dict[str, Any]:
    """Everything the matrix template needs for a query; `error` says why there is no grid.
    Without a `cluster` in the query, the cluster `chosen` last (when still readable) or the first."""
    scope = scope_of(request)
    clusters = list(clusters_visible(scope))
    context: dict[str, Any] = {
        "clusters": clusters,
        "legend": LEGEND,
        "outcome_choices": OUTCOME_CHOICES,
        "poll_seconds": poll_seconds(),
    }
    if not clusters:
        return {**context, "error": "no-cluster"}
    params = params.copy()
    if not params.get("cluster"):
        names = [cluster.name for cluster in clusters]
        params["cluster"] = chosen if chosen in names else names[0]
    if not params.get("namespace"):
        params["namespace"] = CLUSTER_TOKEN
    cells = CellFilterSet(params, queryset=rows_visible(scope), request=request)
    context.update(params=params, cells_filter=cells)
    if not cells.is_valid():
        return {**context, "error": "invalid"}
    cluster: Cluster = cells.form.cleaned_data["cluster"]
    namespace = page_namespace(cells.form.cleaned_data.get("namespace"))
    context.update(
        cluster=cluster,
        namespace=namespace,
        all_namespaces=namespace is ACROSS,
        scope=page_token(namespace),
        export_query=export_query(params),
        facets=model_facets(cluster, scope=scope),
        version=matrix_version(cluster),
    )
    try:
        source = cells.source()
    except MatrixMissing as error:
        return {**context, "error": "no-matrix", "error_text": str(error)}
    except NamespaceUnknown as error:
        return {**context, "error": "unknown-namespace", "error_text": error.message, "namespaces": error.known}
    grid = matrix_grid(
        source.build,
        cells.qs.filter(build=source.build),
        namespace=namespace,
        statuses=cells.form.cleaned_data.get("status") or (),
        page=params.get("page"),
        column_page=params.get("cpage"),
        columns_mode=params.get("cols", "page"),
        runtime_ids=cells.runtime_ids(source.cluster),
    )
    return {
        **context,
        "build": source.build,
        "grid": grid,
        "grid_rows": grid_rows_html(grid),
        "cell_base": reverse("matrix:cell", args=[1, 1, "x"]).removesuffix("1/1/x/"),
        "namespaces": matrix_namespaces(source.build, scope=scope),
        "matrix_url": f"{reverse('matrix:matrix')}?{params.urlencode()}",
    }


# A cell's status as its class (one letter: the page has thousands of cells) and its text.
CELL_CLASS = {
    OUT_OF_SCOPE: "o",
    CellStatus.SELECTED.value: "s",
    CellStatus.COMPATIBLE.value: "c",
    CellStatus.MANUAL_ONLY.value: "m",
    CellStatus.EXCLUDED.value: "x",
    CellStatus.DISABLED.value: "d",
}
CELL_TEXT = {OUT_OF_SCOPE: "", CellStatus.MANUAL_ONLY.value: "M", CellStatus.DISABLED.value: "\u2013"}


def grid_rows_html(grid: GridPage) -> list[tuple[MatrixRow, SafeString]]:
    """The cells of each row of a grid page as HTML, built here rather than in the template: a
    page has thousands of cells and the template engine takes tens of microseconds per variable.

    A cell is only `<td class=X>TEXT</td>` (X: the status letter of CELL_CLASS; TEXT: the score,
    M, \u2013 or \u00b7): its model and runtime are its row's and column's headers (`data-m`,
    `data-r`), from which static/js/site.js makes its link, its label and its reason on focus
    or hover. Nothing in a cell comes from the cluster, so nothing in it needs escaping; a page
    of 50 x 60 cells stays near 60 KB (benchmarks/matrix_page.py)."""
    pieces: dict[tuple[str, int | None], SafeString] = {}
    rows = []
    for row, cells in grid.rows:
        parts = []
        for cell in cells:
            key = (cell.status, cell.score)
            piece = pieces.get(key)
            if piece is None:
                text = cell.score if cell.score is not None else CELL_TEXT.get(cell.status, "\u00b7")
                piece = pieces[key] = format_html("<td class={}>{}</td>", CELL_CLASS[cell.status], text)
            parts.append(piece)
        rows.append((row, SafeString("".join(parts))))
    return rows


# The cookie naming the cluster the reader chose last, so that registering another one does not
# switch the page (a cookie, not the session: no database query per page).
CHOSEN_CLUSTER = "matrix_cluster"


@require_safe
@read_access
def matrix(request: HttpRequest) -> HttpResponse:
    chosen = request.COOKIES.get(CHOSEN_CLUSTER)
    context = matrix_context(request, request.GET, chosen=chosen)
    status = 400 if context.get("error") in ("invalid", "unknown-namespace") else 200
    template = "matrix/matrix.html#grid" if is_partial(request) else "matrix/matrix.html"
    response = render(request, template, context, status=status)
    cluster = context.get("cluster")
    if cluster is not None and status == 200 and cluster.name != chosen:
        response.set_cookie(
            CHOSEN_CLUSTER,
            cluster.name,
            max_age=365 * 24 * 3600,
            samesite="Lax",
            httponly=True,
            secure=settings.SESSION_COOKIE_SECURE,
        )
    return response


@require_safe
@read_access
def matrix_counts(request: HttpRequest) -> HttpResponse:
    """The counts at the top of the matrix (loaded after the grid: the lint takes a while once)."""
    scope = scope_of(request)
    cluster = cluster_or_404(request.GET.get("cluster"), scope=scope)
    namespace = page_namespace(request.GET.get("namespace"))
    build = current_build(cluster)
    summary = None if build is None else matrix_summary(cluster, build, namespace, scope=scope)
    context = {"cluster": cluster, "namespace": namespace, "scope": page_token(namespace), "summary": summary}
    return render(request, "matrix/matrix.html#counts", context)


@require_safe
@read_access
def matrix_version_poll(request: HttpRequest) -> HttpResponse:
    """Polled by pages that show the matrix: 204 while the version the page shows (`since`) is
    current; otherwise the new poller and an HX-Trigger `matrix-changed` so the page refreshes."""
    cluster = cluster_or_404(request.GET.get("cluster"), scope=scope_of(request))
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
