"""The Policies page: each assertion's state on one cluster, since when, and the change that
broke or fixed it (linked to History and, for a patch, its audit record)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from access.current import scope_of
from core.web import read_access
from inventory.models import Cluster
from inventory.selectors import clusters_visible
from policies.selectors import assertion_state_list
from policies.visibility import WITHHELD
from web.pages.inventory import page_cluster


@require_safe
@read_access
def policies(request: HttpRequest) -> HttpResponse:
    cluster = page_cluster(request)
    if not isinstance(cluster, Cluster):
        return cluster
    scope = scope_of(request)
    states = assertion_state_list(cluster, scope=scope, user=request.user)
    failing = [view for view in states if not view.state.passing]
    context = {
        "cluster": cluster,
        "clusters": clusters_visible(scope),
        "states": states,
        "failing": len(failing),
        "failing_states": failing,  # the answer first; the passing ones fold on a narrow screen
        "passing_states": [view for view in states if view.state.passing],
        "withheld_text": WITHHELD,
    }
    return render(request, "policies/policies.html", context)
