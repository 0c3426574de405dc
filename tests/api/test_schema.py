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
