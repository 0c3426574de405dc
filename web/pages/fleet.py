"""The fleet page: every cluster the reader may read, side by side."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from access.current import scope_of
from core.web import read_access
from fleet.services import cluster_counts, fleet_get, rows_matching

ROWS_PER_PAGE = 50


@require_safe
@read_access
def fleet(request: HttpRequest) -> HttpResponse:
    """Models (or, with `?view=runtimes`, runtimes) across clusters; `?q=` filters model names,
    `?only=disagree` keeps the rows where clusters disagree."""
    view = "runtimes" if request.GET.get("view") == "runtimes" else "models"
    text, disagree_only = request.GET.get("q", ""), request.GET.get("only") == "disagree"
    scope = scope_of(request)
    data = fleet_get(scope=scope)
    page = Paginator(rows_matching(data.rows, text=text, disagree_only=disagree_only), ROWS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    names = [item.name for item in data.clusters]
    context = {
        "view": view,
        "q": text,
        "disagree_only": disagree_only,
        "clusters": [cluster_counts(item, scope=scope) for item in data.clusters],
        "names": names,
        "disagreeing": data.disagreeing,
        "rows_total": len(data.rows),
        "page": page,
        "rows": [
            {
                "row": row,
                "cells": [(name, row.cells[name]) for name in names],
                "reasons": data.reasons(row) if row.disagree else [],
            }
            for row in page.object_list
        ],
        "reach": [
            {"reach": reach, "counts": [{"name": name, "models": reach.models.get(name)} for name in names]}
            for reach in data.reach
        ],
    }
    return render(request, "fleet/fleet.html", context)
