"""A typed Python client generated from the OpenAPI schema (openapi-python-client, pinned in
requirements.txt) reads the cells of one model from the application in-process: what a tool
author gets by running the generator on /api/schema/."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.core.handlers.wsgi import WSGIHandler
from rest_framework.test import APIClient

from inventory.models import Cluster, Resource

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

PACKAGE = "ome_compat_client"
MODEL = "qwen-image-pvc"


@pytest.fixture
def generated_client(tmp_path: Path, api: APIClient) -> Iterator[Any]:
    schema = tmp_path / "openapi.json"
    schema.write_text(json.dumps(api.get("/api/schema/", {"format": "json"}).json()))
    # The generator formats its output with ruff, which lives beside this interpreter.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    result = subprocess.run(
        [Path(sys.executable).parent / "openapi-python-client", "generate", "--path", str(schema),
         "--output-path", str(tmp_path / PACKAGE), "--meta", "none"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PATH": path},
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name == PACKAGE or name.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_a_generated_client_fetches_the_cells_of_one_model_as_typed_objects(
    demo: Cluster, generated_client: Any, wsgi_app: WSGIHandler
) -> None:
    cells_list = importlib.import_module(f"{PACKAGE}.api.v1.v1_matrix_cells_list")
    models = importlib.import_module(f"{PACKAGE}.models")
    model = Resource.objects.get(cluster=demo, name=MODEL)
    client = generated_client.Client(base_url="http://testserver")
    client.set_httpx_client(httpx.Client(base_url="http://testserver", transport=httpx.WSGITransport(app=wsgi_app)))

    answer = cells_list.sync_detailed(client=client, model=model.pk, reasons=True, page_size=1000)
    assert answer.status_code == 200, answer.content
    page = answer.parsed

    assert isinstance(page, models.PaginatedCellList)
    assert page.count == len(page.results) > 0
    assert {(cell.model.id, cell.model.name) for cell in page.results} == {(model.pk, MODEL)}
    assert "_cluster" in {cell.namespace for cell in page.results}
    assert all(isinstance(cell.status, models.CellStatusEnum) for cell in page.results)
    assert "excluded" in {cell.status.value for cell in page.results}
    assert (page.ome.name, page.build.cluster) == ("v1.3", demo.name)
