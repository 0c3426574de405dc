"""Site-level pages: the home page, and the sync page, which shows each cluster's inventory
sync beside the matrix build it reads from (the probes live in ome_dashboard.ops)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from access.current import current_scope
from core.web import is_partial, poll_seconds, read_access
from inventory.selectors import cluster_list
from matrix.selectors import latest_builds_by_cluster


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


def _sync_context() -> dict[str, object]:
    clusters = list(cluster_list().order_by("name"))
    builds = latest_builds_by_cluster()
    scope = current_scope()
    return {
        "clusters": [
            # `whole`: the reader sees all of the cluster, so its totals too.
            {"cluster": cluster, "builds": builds.get(cluster.pk, {}), "whole": scope.reads_whole(cluster.name)}
            for cluster in clusters
        ],
        "poll_seconds": poll_seconds(),
    }


@require_safe
@read_access
def sync(request: HttpRequest) -> HttpResponse:
    """Clusters, their sync state per kind, errors, and the matrix build each reads from. The
    table refreshes itself every few seconds (htmx)."""
    template = "sync.html#clusters" if is_partial(request) else "sync.html"
    return render(request, template, _sync_context())
