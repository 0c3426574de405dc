"""The lint page: findings about a cluster's runtimes, by severity."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from core.web import read_access
from inventory.models import Resource
from inventory.selectors import cluster_or_404, clusters_visible

from .selectors import lint_report_get


@require_safe
@read_access
def lint(request: HttpRequest) -> HttpResponse:
    cluster = cluster_or_404(request.GET.get("cluster")) if clusters_visible().exists() else None
    if cluster is None:
        return render(request, "matrix/matrix.html", {"error": "no-cluster", "clusters": []})
    report = lint_report_get(cluster)
    severity = request.GET.get("severity", "")
    findings = [f for f in report.findings if not severity or f.severity == severity]
    keys = {key for finding in findings for key in (*finding.runtimes, *finding.models)}
    ids = {
        resource.key: resource.pk
        for resource in Resource.objects.filter(cluster=cluster, name__in={key[2] for key in keys}).only(
            "kind", "namespace", "name"
        )
    }
    context = {
        "cluster": cluster,
        "clusters": clusters_visible(),
        "counts": report.counts(),
        "severity": severity,
        "findings": [
            {
                "finding": finding,
                "runtimes": [(key, ids.get(key)) for key in finding.runtimes],
                "models": [(key, ids.get(key)) for key in finding.models],
            }
            for finding in findings
        ],
    }
    return render(request, "lint/lint.html", context)
