"""HTML pages of the inventory: the clusters, how each kind last synced, and a resync button."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe
from kombu.exceptions import OperationalError

from compat.models import MatrixBuild
from compat.views import poll_seconds, read_access

from .models import Cluster
from .selectors import cluster_list
from .tasks import resync_cluster

# A resync only reads the cluster, but it is work started on the user's behalf: it needs a login
# and the permission to change clusters.
RESYNC_PERMISSION = "inventory.change_cluster"


def _sync_context() -> dict[str, object]:
    clusters = list(cluster_list().order_by("name"))
    builds: dict[int, dict[str, MatrixBuild]] = {}
    for build in MatrixBuild.objects.filter(
        status__in=[MatrixBuild.Status.SUCCEEDED, MatrixBuild.Status.RUNNING, MatrixBuild.Status.FAILED]
    ).order_by("started_at", "pk"):
        builds.setdefault(build.cluster_id, {})[build.status] = build
    return {
        "clusters": [{"cluster": cluster, "builds": builds.get(cluster.pk, {})} for cluster in clusters],
        "poll_seconds": poll_seconds(),
    }


@require_safe
@read_access
def sync(request: HttpRequest) -> HttpResponse:
    """Clusters, their sync state per kind, errors, and the matrix build each reads from. The
    table refreshes itself every few seconds (htmx)."""
    htmx = getattr(request, "htmx", None)
    partial = htmx is not None and bool(htmx) and not htmx.boosted
    template = "inventory/sync.html#clusters" if partial else "inventory/sync.html"
    return render(request, template, _sync_context())


@require_POST
def resync(request: HttpRequest, name: str) -> HttpResponse:
    """Queue a full resync of one cluster (inventory.tasks.resync_cluster), after commit."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not request.user.has_perm(RESYNC_PERMISSION):
        raise PermissionDenied(f"resyncing a cluster needs the {RESYNC_PERMISSION} permission")
    cluster = get_object_or_404(Cluster, name=name)
    try:
        resync_cluster.apply_async((cluster.pk,), ignore_result=True)
    except (OperationalError, ConnectionError, TimeoutError, RuntimeError):
        messages.error(request, f"Resync of cluster {cluster.name} not queued: the task broker (Redis) is unreachable.")
    else:
        messages.success(request, f"Resync of cluster {cluster.name} queued; the table below updates when it has run.")
    return redirect("inventory:sync")
