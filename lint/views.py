"""The lint page: a cluster's finding groups (one per root cause) by severity, each with its
fix opened in the runtime what-if, and the acknowledge / show-again actions."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST, require_safe

from access.current import scope_of
from access.scope import Scope
from core.errors import DomainError
from core.web import editable_manifest, read_access
from inventory.models import Cluster, Resource
from inventory.selectors import clusters_visible, resources_visible
from inventory.views import page_cluster
from matching import ObjectKey

from .models import ACKNOWLEDGE_PERMISSION
from .rules import SEVERITIES, Fix
from .selectors import GroupState, lint_group_states
from .services import lint_acknowledge, lint_withdraw


def _resources(cluster: Cluster, keys: set[ObjectKey], scope: Scope) -> dict[ObjectKey, Resource]:
    found = resources_visible(scope).filter(cluster=cluster, name__in={key[2] for key in keys})
    return {resource.key: resource for resource in found if resource.key in keys}


def _fix_form(fixes: list[Fix | None], resources: dict[ObjectKey, Resource]) -> dict[str, Any] | None:
    """Where the fixes open: the what-if of the first one's target runtime, with the manifests
    of the objects they change filled in (several YAML documents when they change several)."""
    if not fixes or any(fix is None for fix in fixes):
        return None
    present = [fix for fix in fixes if fix is not None]
    changed = [(fix, key) for fix in present for key in fix.changed]
    if present[0].target not in resources or not all(key in resources for _fix, key in changed):
        return None
    documents = [editable_manifest(fix.apply_to(key, resources[key].obj)) for fix, key in changed]
    return {"runtime_id": resources[present[0].target].pk, "manifest": "---\n".join(documents)}


def _item(state: GroupState, resources: dict[ObjectKey, Resource]) -> dict[str, Any]:
    group = state.group
    return {
        "state": state,
        "group": group,
        "runtimes": [(key, resources[key].pk if key in resources else None) for key in group.runtimes],
        "models": [(key, resources[key].pk if key in resources else None) for key in group.models],
        "fix_form": _fix_form([group.fix], resources),
        "pair_form": _fix_form([group.fix, group.partner], resources) if group.pair is not None else None,
        "alternative_form": _fix_form([group.alternative], resources) if group.alternative is not None else None,
    }


@require_safe
@read_access
def lint(request: HttpRequest) -> HttpResponse:
    cluster = page_cluster(request)
    if not isinstance(cluster, Cluster):
        return cluster
    scope = scope_of(request)
    states = lint_group_states(cluster, scope=scope, proven=True)
    show_acknowledged = request.GET.get("acknowledged") in ("1", "true", "on")
    severity = request.GET.get("severity", "")
    listed = [state for state in states if show_acknowledged or not state.hidden]
    counts = {name: sum(1 for state in listed if state.group.severity == name) for name in SEVERITIES}
    shown = [state for state in listed if not severity or state.group.severity == severity]
    keys = {key for state in shown for key in (*state.group.runtimes, *state.group.models)}
    keys |= {key for state in shown for fix in (state.group.fix, state.group.partner) if fix for key in fix.changed}
    resources = _resources(cluster, keys, scope)
    context = {
        "cluster": cluster,
        "clusters": clusters_visible(scope),
        "counts": counts,
        "severity": severity,
        "show_acknowledged": show_acknowledged,
        "hidden": sum(1 for state in states if state.hidden),
        "findings_total": sum(state.group.count for state in listed),
        "items": [_item(state, resources) for state in shown],
        "may_acknowledge": request.user.has_perm(ACKNOWLEDGE_PERMISSION),
        "acknowledge_permission": ACKNOWLEDGE_PERMISSION,
    }
    return render(request, "lint/lint.html", context)


def _back(cluster: Cluster | None, request: HttpRequest) -> HttpResponse:
    query = {"cluster": cluster.name} if cluster is not None else {}
    if request.POST.get("acknowledged"):
        query["acknowledged"] = "1"
    return redirect(f"{reverse('lint:lint')}?{urlencode(query)}")


@require_POST
def acknowledge(request: HttpRequest) -> HttpResponse:
    """POST cluster, key, reason (and `withdraw=1` to show a group again). Needs a login and
    the lint.acknowledge_finding permission."""
    if not request.user.is_authenticated:
        return redirect_to_login(f"{reverse('lint:lint')}?{urlencode({'cluster': request.POST.get('cluster', '')})}")
    if not request.user.has_perm(ACKNOWLEDGE_PERMISSION):
        raise PermissionDenied(f"acknowledging lint findings needs the {ACKNOWLEDGE_PERMISSION} permission")
    scope = scope_of(request)
    cluster = clusters_visible(scope).filter(name=request.POST.get("cluster", "")).first()
    key = request.POST.get("key", "")
    try:
        if cluster is None:
            raise DomainError(f"no cluster named {request.POST.get('cluster', '')!r}", field="cluster")
        if request.POST.get("withdraw"):
            lint_withdraw(cluster, key, request.user, scope=scope)
            messages.success(request, f"Shown again: {key}.")
        else:
            lint_acknowledge(cluster, key, request.POST.get("reason", ""), request.user, scope=scope)
            messages.success(request, f"Acknowledged and hidden: {key}. “Show acknowledged” lists it.")
    except DomainError as error:
        messages.error(request, f"Not done: {error.message} ({error.field}).")
    return _back(cluster, request)
