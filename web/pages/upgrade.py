"""The upgrade page: what another OME (by default the newest) would decide differently in a
cluster, each difference with the behaviour that causes it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

import matching
from access.current import scope_of
from core.web import read_access
from inventory.selectors import cluster_or_404, clusters_visible
from matrix.upgrade import UnknownBehaviour, upgrade_report
from web.pages.inventory import RESYNC_PERMISSION


@require_safe
@read_access
def upgrade(request: HttpRequest) -> HttpResponse:
    scope = scope_of(request)
    clusters = list(clusters_visible(scope))
    if not clusters:
        return render(request, "matrix/matrix.html", {"error": "no-cluster", "clusters": []})
    cluster = cluster_or_404(request.GET.get("cluster"), scope=scope)
    try:
        report = upgrade_report(cluster, request.GET.get("to"), scope=scope)
    except UnknownBehaviour as error:
        return render(request, "matrix/upgrade.html", {"cluster": cluster, "error": error.message}, status=400)
    context = {
        "cluster": cluster,
        "clusters": clusters,
        "report": report,
        "profiles": [profile for profile in matching.BEHAVIOURS.values() if not profile.proposal],
        "proposals": [profile for profile in matching.BEHAVIOURS.values() if profile.proposal],
        "releases": matching.RELEASES,
        "may_set_version": scope.may_admin(cluster.name) or request.user.has_perm(RESYNC_PERMISSION),
    }
    return render(request, "matrix/upgrade.html", context)
