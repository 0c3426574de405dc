"""The OpenAPI schema is generated without warnings and describes every endpoint."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from django.conf import settings
from django.test import Client


def test_spectacular_validates_the_schema_without_warnings(tmp_path: Path) -> None:
    # What CI runs; a fresh process, so no other test's schema generation hides a warning.
    out = tmp_path / "schema.yaml"

    result = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn", "--file", str(out)],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    paths = yaml.safe_load(out.read_text())["paths"]
    assert {
        "/api/v1/clusters/",
        "/api/v1/models/",
        "/api/v1/runtimes/",
        "/api/v1/inference-services/",
        "/api/v1/sync-states/",
        "/api/v1/matrix/cells/",
        "/api/v1/matrix/cells/export.csv",
        "/api/v1/matrix/cells/export.json",
        "/api/v1/matrix/cell/",
        "/api/v1/matrix/selection/",
        "/api/v1/matrix/history/",
        "/api/v1/matrix/builds/",
    } <= set(paths)


def test_the_cells_page_is_documented_with_its_filters_and_envelope(client: Client) -> None:
    schema = client.get("/api/schema/", {"format": "json"}).json()

    operation = schema["paths"]["/api/v1/matrix/cells/"]["get"]
    names = {parameter["name"] for parameter in operation["parameters"]}
    envelope = schema["components"]["schemas"]["PaginatedCellList"]

    assert {"cluster", "namespace", "model", "runtime", "status", "reasons", "page", "page_size"} <= names
    assert {"ome", "build", "count", "results"} <= set(envelope["required"])


def _names(schema: object) -> set[str]:
    """Every property name of every object in a schema, recursively."""
    if isinstance(schema, dict):
        found = set(schema.get("properties", {})) if isinstance(schema.get("properties"), dict) else set()
        return found | {name for value in schema.values() for name in _names(value)}
    if isinstance(schema, list):
        return {name for value in schema for name in _names(value)}
    return set()


def test_every_field_and_query_parameter_is_snake_case(client: Client) -> None:
    schema = client.get("/api/schema/", {"format": "json"}).json()
    parameters = {
        parameter["name"]
        for operations in schema["paths"].values()
        for operation in operations.values()
        for parameter in operation.get("parameters", [])
    }

    names = _names(schema["components"]["schemas"]) | parameters

    assert {"model_name", "runtime_namespace", "manual_only", "diffusion_pipeline"} <= names
    assert sorted(name for name in names if name != name.lower()) == []


def test_the_cell_and_selection_take_names_as_well_as_ids(client: Client) -> None:
    schema = client.get("/api/schema/", {"format": "json"}).json()

    for path, roles in (("/api/v1/matrix/cell/", ("model", "runtime")), ("/api/v1/matrix/selection/", ("model",))):
        names = {parameter["name"] for parameter in schema["paths"][path]["get"]["parameters"]}
        for role in roles:
            assert {role, f"{role}_kind", f"{role}_namespace", f"{role}_name"} <= names, path


def _refers_to(schema: dict[str, object], component: str) -> bool:
    ref = f"#/components/schemas/{component}"
    return schema.get("$ref") == ref or any(part.get("$ref") == ref for part in schema.get("allOf", []))  # type: ignore[attr-defined]


def test_every_answer_with_verdicts_says_how_fresh_they_are_with_one_component(client: Client) -> None:
    components = client.get("/api/schema/", {"format": "json"}).json()["components"]["schemas"]
    # Every answer with `ome` shows verdicts, but a cluster's own (its profile, beside its sync states).
    with_ome = {
        name: schema
        for name, schema in components.items()
        if "ome" in schema.get("properties", {}) and name != "Cluster"
    }
    fleet = components["FleetCluster"]["properties"]  # one column per cluster, no `ome`

    assert {"LintReport", "IsvcVerdictList", "PaginatedCellList", "CellDetail", "WhatIf"} <= set(with_ome)
    assert sorted(name for name, schema in with_ome.items() if "freshness" not in schema["properties"]) == []
    assert [
        name for name, schema in with_ome.items() if not _refers_to(schema["properties"]["freshness"], "Freshness")
    ] == []
    assert _refers_to(fleet["freshness"], "Freshness")
    state = components["Freshness"]["properties"]["state"]
    state = components[state["$ref"].rsplit("/", 1)[-1]] if "$ref" in state else state
    assert state["enum"] == ["live", "lagging", "stale", "unknown"]
