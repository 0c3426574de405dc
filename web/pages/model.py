"""A model's page: its rows, its runtimes ranked, who set its diffusionPipeline, its
InferenceServices and the history of its cells."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from access.current import scope_of
from core.web import namespace_from_token, namespace_token, poll_seconds, read_access
from inventory.models import Kind
from inventory.parsed import unusable_from
from inventory.selectors import field_managers, model_or_404
from matrix.selectors import current_build, matrix_version, model_history
from web.rankings import model_isvcs, model_ranking, model_rows, parsed_object

PROVENANCE_UNKNOWN = (
    "Who set these fields cannot be told: the object carries no metadata.managedFields (a manifest "
    "folder, or an API server that does not report them)."
)


def _flatten(value: object, prefix: str = "") -> list[tuple[str, object]]:
    if isinstance(value, Mapping) and value:
        found: list[tuple[str, object]] = []
        for key, item in value.items():
            found += _flatten(item, f"{prefix}.{key}" if prefix else str(key))
        return found
    return [(prefix, value)]


def _who(managers: list[str]) -> str:
    """OME's own controllers and agent, or someone else: managedFields name the writer, and
    OME's writers carry "ome" in their manager name; the raw names are shown alongside."""
    if not managers:
        return "not tracked"
    if any("ome" in manager.lower().split(" (")[0] for manager in managers):
        return "filled by OME"
    return "set by a user or another tool"


def pipeline_provenance(obj: Mapping[str, Any]) -> tuple[list[dict[str, object]], str | None]:
    """Each recorded diffusionPipeline field with who set it, and a note when it cannot be told."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    pipeline = spec.get("diffusionPipeline") if isinstance(spec, Mapping) else None
    if not isinstance(pipeline, Mapping) or not pipeline:
        return [], None
    owners = field_managers(obj, ("spec", "diffusionPipeline"))
    fields = []
    for path, value in _flatten(pipeline):
        if owners is None:
            fields.append({"path": path, "value": value, "managers": [], "who": None})
            continue
        managers = owners.get(path) or next(
            (names for owned, names in owners.items() if owned and path.startswith(owned + ".")), []
        )
        fields.append({"path": path, "value": value, "managers": managers, "who": _who(managers)})
    return fields, PROVENANCE_UNKNOWN if owners is None else None


@require_safe
@read_access
def model(request: HttpRequest, pk: int) -> HttpResponse:
    scope = scope_of(request)
    resource = model_or_404(pk, scope=scope)
    cluster = resource.cluster
    build = current_build(cluster)
    rows = [] if build is None else model_rows(build, resource, scope=scope)
    default = resource.namespace if resource.kind == Kind.BASE_MODEL else ""
    namespace = namespace_from_token(request.GET.get("namespace")) if request.GET.get("namespace") else default
    row = next((r for r in rows if r.namespace == namespace), None)
    parsed = parsed_object(cluster, resource, scope=scope)
    pipeline_fields, provenance_note = pipeline_provenance(resource.obj)
    context = {
        "cluster": cluster,
        "model": resource,
        "parsed": parsed,
        "invalid": resource.error,
        "rows": rows,
        "namespace": namespace,
        "scope": namespace_token(namespace),
        "ranking": model_ranking(cluster, row, resource, namespace, scope=scope),
        "unusable": unusable_from(resource, namespace),
        "pipeline_fields": pipeline_fields,
        "provenance_note": provenance_note,
        "isvcs": model_isvcs(cluster, resource, scope=scope),
        "history": model_history(cluster, resource, scope=scope),
        "build": build,
        "version": matrix_version(cluster),
        "poll_seconds": poll_seconds(),
    }
    return render(request, "matrix/model.html", context)
