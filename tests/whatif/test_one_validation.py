"""One validation for every entry point: `python -m matching diff`, `manage.py whatif`,
`POST /api/v1/whatif/check/`, `POST /api/v1/matrix/whatif/` and the what-if page check
manifests against OME's CRD schemas alike. A misspelled field is an error by default (exit 2,
or a 400 with `problems[]`), naming the document, line and path with a "did you mean"; the
lenient flag makes it a warning, reported with the answer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client
from rest_framework.test import APIClient

from inventory.models import Cluster, Resource

from .test_check import E5_RUNTIME, ROOT, whatif

TYPO_LINE = "    mx: 65B"


def typo_manifest() -> str:
    """The catalog's e5 runtime with `modelSizeRange: {mx: 65B}` (a misspelled max)."""
    runtime = yaml.safe_load(E5_RUNTIME.read_text())
    runtime["spec"]["modelSizeRange"] = {"mx": "65B"}
    return yaml.safe_dump(runtime)


def typo_line(text: str) -> int:
    return text.splitlines().index(TYPO_LINE) + 1


def assert_the_typo(problem: dict[str, Any], text: str, severity: str = "error") -> None:
    assert problem["path"] == "spec.modelSizeRange.mx"
    assert problem["line"] == typo_line(text)
    assert problem["hint"] == "did you mean max?"
    assert problem["severity"] == severity


@pytest.mark.django_db
def test_manage_whatif_refuses_the_typo_and_lenient_warns(demo: Cluster, tmp_path: Path) -> None:
    text = typo_manifest()
    (tmp_path / "rt.yaml").write_text(text)

    code, _out, err = whatif("--cluster", "demo", tmp_path / "rt.yaml")
    lenient_code, out, lenient_err = whatif("--cluster", "demo", "--lenient", tmp_path / "rt.yaml")

    assert code == 2
    assert f"rt.yaml: document 0, line {typo_line(text)}: " in err
    assert "spec.modelSizeRange.mx: unknown field" in err
    assert "(did you mean max?)" in err
    assert lenient_code == 0
    assert "warning: spec.modelSizeRange.mx: unknown field" in lenient_err
    assert out


def test_matching_diff_refuses_the_same_typo(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    base.mkdir()
    head.mkdir()
    (base / "rt.yaml").write_text(E5_RUNTIME.read_text())
    (head / "rt.yaml").write_text(typo_manifest())

    done = subprocess.run(
        [sys.executable, "-m", "matching", "diff", base, head, "--fail-on", "any-change"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )

    assert done.returncode == 2
    assert "spec.modelSizeRange.mx: unknown field" in done.stderr


@pytest.mark.django_db
@pytest.mark.parametrize("endpoint", ["/api/v1/whatif/check/", "/api/v1/matrix/whatif/"])
def test_both_apis_answer_400_with_problems_and_lenient_warns(demo: Cluster, endpoint: str) -> None:
    text = typo_manifest()
    client = APIClient()

    refused = client.post(endpoint, {"cluster": "demo", "manifests": text}, format="json")
    lenient = client.post(endpoint, {"cluster": "demo", "manifests": text, "lenient": True}, format="json")

    assert refused.status_code == 400
    (problem,) = refused.json()["problems"]
    assert_the_typo(problem, text)
    assert problem["document"] == 1
    assert lenient.status_code == 200, lenient.content
    body = lenient.json()
    warnings = body["problems"] if "problems" in body else body["warnings"]
    typo = next(warning for warning in warnings if warning["path"] == "spec.modelSizeRange.mx")
    assert typo["line"] == typo_line(text)
    assert typo["hint"] == "did you mean max?"


@pytest.mark.django_db
def test_errors_and_warnings_of_every_document_come_back_together(demo: Cluster) -> None:
    first = yaml.safe_load(typo_manifest())
    second = yaml.safe_load(E5_RUNTIME.read_text())
    second["metadata"]["name"] = "second"
    second["spec"]["supportedModelFormats"][0]["autoSelect"] = "yes"
    del second["spec"]["supportedModelFormats"][0]["modelFramework"]  # required: a warning
    text = yaml.safe_dump_all([first, second])

    response = APIClient().post("/api/v1/matrix/whatif/", {"manifests": text}, format="json")

    problems = response.json()["problems"]
    assert response.status_code == 400
    assert [(p["document"], p["path"], p["severity"]) for p in problems] == [
        (1, "spec.modelSizeRange.mx", "error"),
        (2, "spec.supportedModelFormats[0]", "warning"),
        (2, "spec.supportedModelFormats[0].autoSelect", "error"),
    ]


@pytest.mark.django_db
def test_the_whatif_page_shows_the_line_and_hint_and_has_a_lenient_choice(client: Client, demo: Cluster) -> None:
    runtime = Resource.objects.get(cluster=demo, kind="ClusterServingRuntime", name="vllm-e5-mistral-7b-instruct")
    text = typo_manifest()

    refused = client.post(f"/runtimes/{runtime.pk}/what-if/", {"manifest": text})
    lenient = client.post(f"/runtimes/{runtime.pk}/what-if/", {"manifest": text, "lenient": "on"})

    html = refused.content.decode()
    assert refused.status_code == 400
    assert f"line {typo_line(text)}: <code>spec.modelSizeRange.mx</code>" in html
    assert "(did you mean max?)" in html
    assert 'name="lenient"' in html
    assert lenient.status_code == 200
    assert "spec.modelSizeRange.mx</code> — unknown field" in lenient.content.decode()
