"""The lint page: a cluster's finding groups (one per root cause) by severity, each with its
fix opened in the runtime what-if, and the acknowledge / show-again actions."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_POST, require_safe

from access.current import scope_of
from access.scope import Scope
from core.cache import VersionedCache
from core.errors import DomainError
from core.web import read_access
from inventory.models import Cluster
from inventory.selectors import clusters_visible, resources_visible
from lint.models import ACKNOWLEDGE_PERMISSION
from lint.proving import FORMS, form_fixes, lint_proofs_request
from lint.rules import SEVERITIES, FindingGroup
from lint.selectors import GroupState, lint_fix_manifests, lint_group_states, lint_report_get
from lint.services import lint_acknowledge, lint_withdraw
from matching import ObjectKey
from web.pages.inventory import page_cluster

# Each group on the page carries its fixes' manifests (YAML in the what-if forms): a cluster
# with hundreds of groups is read a page at a time.
GROUPS_PER_PAGE = 50


# The models a group names on the page; the rest are counted.
MODELS_SHOWN = 20


Manifests = dict[tuple[str, str, int, ObjectKey], str]
# Cluster id -> at an inventory fingerprint, the YAML of each object as a group's fix changes it,
# by (group key, form role, which of its fixes, object key), as the proving task stored it with
# the proofs (lint.proving). A reader is given only forms whose objects it reads (_fix_form).
_MANIFESTS: VersionedCache[str, Manifests] = VersionedCache("lint_manifests")


def _pks(cluster: Cluster, keys: set[ObjectKey], scope: Scope) -> dict[ObjectKey, int]:
    """The ids of the objects the page names that the reader reads, without their stored objects."""
    found = resources_visible(scope).filter(cluster=cluster, name__in={key[2] for key in keys})
    rows = found.values_list("pk", "kind", "namespace", "name")
    return {(kind, namespace, name): pk for pk, kind, namespace, name in rows if (kind, namespace, name) in keys}


def _manifests(cluster: Cluster, fingerprint: str, scope: Scope) -> Manifests:
    """The fix forms' manifests stored with the proofs of the inventory at `fingerprint`, the
    one the page's report was made at (none before, or once another's replaced them)."""
    held = _MANIFESTS.peek(cluster.pk, fingerprint)
    if held is not None:
        return held
    stored = lint_fix_manifests(cluster, fingerprint, scope=scope)
    if stored is None:
        return {}
    made = {(group, role, index, (key[0], key[1], key[2])): text for group, role, index, key, text in stored}
    return _MANIFESTS.get(cluster.pk, fingerprint, lambda _stale: made)


def _fix_form(group: FindingGroup, role: str, pks: dict[ObjectKey, int], manifests: Manifests) -> dict[str, Any] | None:
    """Where the fixes open: the what-if of the first one's target runtime, with the manifests
    of the objects they change filled in (several YAML documents when they change several)."""
    present = form_fixes(group, role)
    if not present:
        return None
    changed = [(index, key) for index, fix in enumerate(present) for key in fix.changed]
    documents = [manifests.get((group.key, role, index, key)) for index, key in changed]
    if present[0].target not in pks or not all(key in pks for _index, key in changed) or None in documents:
        return None
    return {"runtime_id": pks[present[0].target], "manifest": "---\n".join(filter(None, documents))}


def _item(state: GroupState, pks: dict[ObjectKey, int], manifests: Manifests) -> dict[str, Any]:
    group = state.group
    return {
        "state": state,
        "group": group,
        "runtimes": [(key, pks.get(key)) for key in group.runtimes],
        "models": [(key, pks.get(key)) for key in group.models[:MODELS_SHOWN]],
        "models_more": max(len(group.models) - MODELS_SHOWN, 0),
        **{f"{role}_form": _fix_form(group, role, pks, manifests) for role, _fixes in FORMS},
    }


@require_safe
@read_access
def lint(request: HttpRequest) -> HttpResponse:
    cluster = page_cluster(request)
    if not isinstance(cluster, Cluster):
        return cluster
    scope = scope_of(request)
    report = lint_report_get(cluster, scope=scope, proven=True)
    if report.fixes_pending_for is not None:
        lint_proofs_request(cluster.pk)
    states = lint_group_states(cluster, scope=scope, report=report)
    show_acknowledged = request.GET.get("acknowledged") in ("1", "true", "on")
    severity = request.GET.get("severity", "")
    listed = [state for state in states if show_acknowledged or not state.hidden]
    counts = {name: sum(1 for state in listed if state.group.severity == name) for name in SEVERITIES}
    filtered = [state for state in listed if not severity or state.group.severity == severity]
    page = Paginator(filtered, GROUPS_PER_PAGE).get_page(request.GET.get("page"))
    shown: list[GroupState] = list(page.object_list)
    groups = [state.group for state in shown]
    fixes = [fix for group in groups for fix in (group.fix, group.partner, group.alternative) if fix]
    named = {key for group in groups for key in (*group.runtimes, *group.models[:MODELS_SHOWN])}
    pks = _pks(cluster, named | {key for fix in fixes for key in (fix.target, *fix.changed)}, scope)
    manifests = _manifests(cluster, report.fingerprint, scope) if report.fixes_pending_for is None else {}
    context = {
        "cluster": cluster,
        "clusters": clusters_visible(scope),
        "fixes_pending_for": report.fixes_pending_for,
        "poll_seconds": settings.MATRIX_POLL_SECONDS,
        "counts": counts,
        "severity": severity,
        "show_acknowledged": show_acknowledged,
        "hidden": sum(1 for state in states if state.hidden),
        "findings_total": sum(state.group.count for state in listed),
        "items": [_item(state, pks, manifests) for state in shown],
        "page": page,
        "filtered_total": len(filtered),
        # The filters the pager's links keep.
        "page_query": urlencode(
            {"cluster": cluster.name, "severity": severity, **({"acknowledged": "1"} if show_acknowledged else {})}
        ),
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
