"""The resync button of the sync page (web.pages.home.sync), the add-cluster page, and the
cluster a page of one cluster shows (with a page that says so when there is none, or the name
matches none)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from kombu.exceptions import OperationalError

from access.current import scope_of
from inventory.models import Cluster
from inventory.ome_release import ome_version_set_admin
from inventory.registration import registration_choices
from inventory.selectors import ClusterChoiceError, cluster_choose, clusters_visible
from inventory.services import cluster_register
from inventory.tasks import connection_test_in_worker, resync_cluster
from web.forms import ClusterAddForm

# A resync only reads the cluster, but it is work started on the user's behalf: it needs a login
# and the admin role on the cluster (or the Django permission to change clusters).
RESYNC_PERMISSION = "inventory.change_cluster"
# Registering a cluster needs what POST /api/v1/clusters/ needs.
ADD_PERMISSION = "inventory.add_cluster"


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


@require_POST
def ome_version(request: HttpRequest, name: str) -> HttpResponse:
    """Set the OME version an administrator knows the cluster runs (`version`: a release tag or
    a profile name; empty clears it), as `manage.py ome_version CLUSTER --set` does; back to
    the page it came from (`next`, a path of this site)."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    scope = scope_of(request)
    cluster = get_object_or_404(clusters_visible(scope), name=name)
    if not (scope.may_admin(cluster.name) or request.user.has_perm(RESYNC_PERMISSION)):
        raise PermissionDenied(f"setting the OME version of cluster {cluster.name} needs the admin role on it")
    version = request.POST.get("version", "").strip()
    try:
        judgement = ome_version_set_admin(cluster, version)
    except ValueError as error:
        messages.error(request, f"OME version of {cluster.name} not set: {error}")
    else:
        messages.success(request, f"Cluster {cluster.name}: {judgement.why}. The matrix is rebuilt with it.")
    target = request.POST.get("next", "")
    return redirect(target if target.startswith("/") and not target.startswith("//") else "sync")


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


def cluster_add(request: HttpRequest) -> HttpResponse:
    """Register a cluster: choose its source, see the connection test ("Test the connection"),
    then confirm ("Register"), which registers it as the API does and queues its first sync."""
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not request.user.has_perm(ADD_PERMISSION):
        raise PermissionDenied("registering a cluster needs the permission to add clusters")
    choices = registration_choices()
    form = ClusterAddForm(request.POST or None, choices=choices, author=request.user)
    context: dict[str, object] = {"form": form, "choices": choices}
    if request.method == "POST" and form.is_valid():
        if "confirm" in request.POST:
            cluster = cluster_register(form.spec)
            _queue_first_sync(request, cluster)
            return redirect("sync")
        context["test"] = connection_test_in_worker(form.spec)
    return render(request, "inventory/cluster_add.html", context, status=400 if form.errors else 200)


def _queue_first_sync(request: HttpRequest, cluster: Cluster) -> None:
    try:
        resync_cluster.apply_async((cluster.pk,), ignore_result=True)
    except (OperationalError, ConnectionError, TimeoutError, RuntimeError):
        messages.warning(request, f"Cluster {cluster.name} registered; its first sync waits for the next resync.")
    else:
        messages.success(request, f"Cluster {cluster.name} registered; its first sync is queued.")
