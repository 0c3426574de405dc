"""The matrix history page: each cluster's cell changes grouped by the change that caused them
(matrix.history), with the patch audit record that made a group; `?patch=ID` keeps that
patch's groups (the audit record's link back)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_safe

from access.current import scope_of
from core.web import read_access
from inventory.models import Cluster
from inventory.selectors import clusters_visible
from matrix.history import HistoryGroup, cause_key, cause_versions, history_page
from patches.models import PatchAttempt
from patches.selectors import patch_records_list
from web.pages.inventory import page_cluster


def _attach_patches(cluster: Cluster, groups: Sequence[HistoryGroup], records: QuerySet[PatchAttempt]) -> None:
    wanted = Q(pk__in=[])
    for group in groups:
        for item in group.cause:
            kind, namespace, name = cause_key(item)
            if cause_versions(item):
                wanted |= Q(
                    model_kind=kind,
                    model_namespace=namespace,
                    model_name=name,
                    new_resource_version__in=cause_versions(item),
                )
    applied = records.filter(cluster_name=cluster.name, result=PatchAttempt.Result.APPLIED)
    attempts = list(applied.filter(wanted))
    for group in groups:
        for item in group.cause:
            versions = cause_versions(item)
            group.patches += [
                a for a in attempts if a.model_key == cause_key(item) and a.new_resource_version in versions
            ]


def _number(value: str | None) -> int | None:
    return int(value) if value and value.isdecimal() else None


@require_safe
@read_access
def history(request: HttpRequest) -> HttpResponse:
    cluster = page_cluster(request)
    if not isinstance(cluster, Cluster):
        return cluster
    scope = scope_of(request)
    # Who patched what is the audit log's: a reader sees the records of their own patches only.
    records = patch_records_list(scope, request.user)
    patch = None
    patch_id = _number(request.GET.get("patch"))
    if patch_id is not None:
        patch = get_object_or_404(records, pk=patch_id, cluster_name=cluster.name)
    before = _number(request.GET.get("before"))
    model = patch.model_key if patch is not None else None
    groups, more = history_page(cluster, scope=scope, before=before, model=model)
    _attach_patches(cluster, groups, records)
    if patch is not None:
        groups = [group for group in groups if any(a.pk == patch.pk for a in group.patches)]
    context = {
        "cluster": cluster,
        "clusters": clusters_visible(scope),
        "groups": groups,
        "more": more,
        "next_before": groups[-1].oldest_pk if groups and more else None,
        "patch": patch,
    }
    return render(request, "history.html", context)
