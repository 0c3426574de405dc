"""The InferenceServices page: what OME does with each today."""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from access.current import scope_of
from core.web import poll_seconds, read_access
from inventory.filters import InferenceServiceFilterSet
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Kind
from inventory.parsed import inventory_for, pipeline_fixable
from inventory.selectors import clusters_visible, resources_visible
from isvcs.explain import GROUPS, error_parts, group_of, verdict_label
from isvcs.services import isvc_at_risk, isvc_verdicts
from matrix.selectors import matrix_version
from web.api.isvcs_filters import IsvcVerdictQuerySerializer
from web.pages.inventory import page_cluster


@require_safe
@read_access
def isvcs(request: HttpRequest) -> HttpResponse:
    """Every InferenceService with what OME decided when the dashboard first saw it and what it
    would decide today, in four groups: blocked, waiting for the model, decided differently today,
    unchanged; before them those OME silently ignores, and after them those waiting for a re-apply.
    `at_risk=1`, `ignored=1` and `reapply=1` filter as the API does (IsvcVerdictQuerySerializer)."""
    cluster = page_cluster(request)
    if not isinstance(cluster, Cluster):
        return cluster
    scope = scope_of(request)
    visible = resources_visible(scope).filter(cluster=cluster)
    found = InferenceServiceFilterSet(
        request.GET, queryset=visible.filter(kind=Kind.INFERENCE_SERVICE).defer("obj"), request=request
    )
    query = IsvcVerdictQuerySerializer(data=request.GET)
    valid = query.is_valid()
    keys = {resource.key for resource in found.qs} if found.is_valid() and valid else set()
    verdicts = [
        verdict for verdict in isvc_verdicts(cluster, scope=scope) if verdict.key in keys and query.keeps(verdict)
    ]
    verdicts.sort(key=lambda verdict: (not isvc_at_risk(verdict), verdict.namespace, verdict.name))
    models = {
        resource.key: resource.pk for resource in visible.filter(kind__in=MODEL_KINDS).only("kind", "namespace", "name")
    }
    runtimes = {
        resource.key: resource.pk
        for resource in visible.filter(kind__in=RUNTIME_KINDS).only("kind", "namespace", "name")
    }
    risky = [v for v in verdicts if isvc_at_risk(v) and v.model is not None and v.runtime is not None]
    inventory = inventory_for(cluster, scope=scope)
    fixable = pipeline_fixable(inventory, [(v.model, v.runtime) for v in risky if v.model and v.runtime])
    groups: dict[str, list[dict[str, object]]] = {name: [] for name, _heading, _help in GROUPS}
    for v in verdicts:
        groups[group_of(v)].append(
            {
                "verdict": v,
                "at_risk": isvc_at_risk(v),
                "first_label": verdict_label(v.first.verdict) if v.first else None,
                "first_at": datetime.fromisoformat(v.first.at) if v.first else None,
                "error": error_parts(inventory, v),
                "model_id": models.get(v.model) if v.model else None,
                "patch_runtime_id": runtimes.get(v.runtime) if (v.model, v.runtime) in fixable and v.runtime else None,
            }
        )
    context = {
        "cluster": cluster,
        "clusters": clusters_visible(scope),
        "filter": found,
        "groups": [(name, heading, text, groups[name]) for name, heading, text in GROUPS],
        "count": len(verdicts),
        "query": query.validated_data if valid else {},
        "query_errors": query.errors,
        "version": matrix_version(cluster),
        "poll_seconds": poll_seconds(),
    }
    return render(request, "isvcs/isvcs.html", context)
