"""The resync button of the sync page (ome_dashboard.views.sync), and the cluster a page of one
cluster shows (with a page that says so when there is none, or the name matches none)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from kombu.exceptions import OperationalError

from access.current import scope_of

from .models import Cluster
from .selectors import ClusterChoiceError, cluster_choose, clusters_visible
from .tasks import resync_cluster

# A resync only reads the cluster, but it is work started on the user's behalf: it needs a login
# and the admin role on the cluster (or the Django permission to change clusters).
RESYNC_PERMISSION = "inventory.change_cluster"


@require_POST
def resync(request: HttpRequest, name: str) -> HttpResponse:
    """Queue a full resync of one cluster (inventory.tasks.resync_cluster), after commit."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    cluster = get_object_or_404(clusters_visible(scope_of(request)), name=name)
    if not (scope_of(request).may_admin(cluster.name) or request.user.has_perm(RESYNC_PERMISSION)):
        raise PermissionDenied(f"resyncing cluster {cluster.name} needs the admin role on it")
    try:
        resync_cluster.apply_async((cluster.pk,), ignore_result=True)
    except (OperationalError, ConnectionError, TimeoutError, RuntimeError):
        messages.error(request, f"Resync of cluster {cluster.name} not queued: the task broker (Redis) is unreachable.")
    else:
        messages.success(request, f"Resync of cluster {cluster.name} queued; the table below updates when it has run.")
    return redirect("sync")


def page_cluster(request: HttpRequest) -> Cluster | HttpResponse:
    """The cluster `?cluster=` names (the first by name when none is named), or the page that
    says there is none (200: nothing registered yet) or that the name matches none (404)."""
    clusters = list(clusters_visible(scope_of(request)))
    name = request.GET.get("cluster")
    if not clusters:
        return render(request, "cluster_missing.html", {"clusters": clusters, "name": name})
    try:
        return cluster_choose(name, default="first", scope=scope_of(request))
    except ClusterChoiceError as error:
        context = {"clusters": clusters, "name": name, "message": error.message}
        return render(request, "cluster_missing.html", context, status=404)
