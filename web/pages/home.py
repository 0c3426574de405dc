"""Site-level pages: the home page, and the sync page, which shows each cluster's inventory
sync beside the matrix build it reads from (the probes live in ome_dashboard.ops)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from access.current import scope_of
from access.scope import Scope
from core.web import is_partial, poll_seconds, read_access
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Kind
from inventory.selectors import cluster_list, resource_list
from matrix.freshness import freshness_of
from matrix.selectors import latest_builds_by_cluster

SEARCH_LIMIT = 50
# What the home page's search box finds, by heading: objects whose name contains the text.
SEARCH_GROUPS = (
    ("Models", MODEL_KINDS),
    ("Runtimes", RUNTIME_KINDS),
    ("InferenceServices", (Kind.INFERENCE_SERVICE.value,)),
)


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


@require_safe
@read_access
def search(request: HttpRequest) -> HttpResponse:
    """Models, runtimes and InferenceServices of every cluster whose name contains `q`."""
    text = request.GET.get("q", "").strip()
    groups = []
    if text:
        for heading, kinds in SEARCH_GROUPS:
            found = (
                resource_list(kinds, scope=scope_of(request))
                .filter(name__icontains=text)
                .order_by("name", "cluster__name", "namespace")
            )
            items = list(found[: SEARCH_LIMIT + 1])
            groups.append({"heading": heading, "items": items[:SEARCH_LIMIT], "more": len(items) > SEARCH_LIMIT})
    return render(request, "search.html", {"q": text, "groups": groups, "limit": SEARCH_LIMIT})


def _sync_context(scope: Scope) -> dict[str, object]:
    clusters = list(cluster_list(scope).order_by("name"))
    builds = latest_builds_by_cluster(scope)
    judged = freshness_of(clusters)
    return {
        "clusters": [
            # `whole`: the reader sees all of the cluster, so its totals too.
            {
                "cluster": cluster,
                "builds": builds.get(cluster.pk, {}),
                "whole": scope.reads_whole(cluster.name),
                "freshness": judged[cluster.name],
            }
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
    return render(request, template, _sync_context(scope_of(request)))
