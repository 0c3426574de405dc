"""The freshness banner alone, for the banner's own polling (templates/matrix/freshness.html)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from access.current import scope_of
from core.web import poll_seconds, read_access
from inventory.selectors import cluster_or_404
from matrix.freshness import cluster_freshness


@require_safe
@read_access
def freshness(request: HttpRequest) -> HttpResponse:
    cluster = cluster_or_404(request.GET.get("cluster"), scope=scope_of(request))
    context = {"cluster": cluster, "freshness": cluster_freshness(cluster), "poll_seconds": poll_seconds()}
    return render(request, "matrix/freshness.html", context)
