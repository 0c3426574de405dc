"""`manage.py whatif --cluster NAME PATH...` and `POST /api/v1/whatif/check/`: manifest trees
checked against registered clusters' stored inventories, reported as `matching diff` reports."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.core.management import call_command
from pytest_django import Settings
from rest_framework.test import APIClient

from access.tokens import api_token_create
from inventory.models import Cluster, Kind, Resource
from inventory.sync import snapshot_apply
from tests.support.access import grant
from tests.support.demo import DEMO_FOLDERS

ROOT = Path(django_settings.BASE_DIR)
E5_RUNTIME = ROOT / "catalog/runtimes/vllm/e5-mistral-7b-instruct-rt.yaml"
E5_MODEL = "e5-mistral-7b-instruct"


def broken_e5(folder: Path) -> Path:
    """The catalog's vllm e5-mistral runtime, asking for a framework the model does not have."""
    folder.mkdir(parents=True, exist_ok=True)
    text = E5_RUNTIME.read_text().replace('version: "4.34.0"', 'version: "9.99.0"')
    (folder / E5_RUNTIME.name).write_text(text)
    return folder


def without_places(found: Any) -> Any:
    """A report's JSON without the places of its findings (the files differ, the findings not)."""
    if isinstance(found, dict):
        return {key: without_places(value) for key, value in found.items() if key != "at"}
    if isinstance(found, list):
        return [without_places(value) for value in found]
    return found


def whatif(*args: str | Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("whatif", *map(str, args), stdout=out, stderr=err)
        code = 0
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_a_changed_runtime_on_the_demo_cluster_excludes_a_model_with_the_reason(demo: Cluster, tmp_path: Path) -> None:
    code, out, err = whatif("--cluster", "demo", broken_e5(tmp_path / "pr"), "--fail-on", "new-exclusion")

    assert code == 1, err
    assert out.startswith("== cluster demo\nJudged as OME v1.3.\nobjects 0 added, 1 changed, 0 removed;")
    assert (
        f"ClusterBaseModel {E5_MODEL} (same in every namespace): ClusterServingRuntime vllm-e5-mistral-7b-instruct: "
        "compatible (2) -> "
        "excluded: model format 'mt:safetensors:1.0.0:MistralModel:transformers:4.34.0' not in supported formats: "
        "framework version mismatch (model=4.34.0, runtime=9.99.0)"
    ) in out
    assert out.endswith("FAILED: new-exclusion (1)\n")  # cluster scope and 3 namespaces alike: one row


@pytest.mark.django_db
def test_the_cluster_check_equals_the_diff_of_the_two_trees(demo: Cluster, tmp_path: Path) -> None:
    """CRD defaults and namespaces are applied the same way: the stored cluster plus the
    changed file gives exactly what `python -m matching diff` gives for the two folders."""
    base, head = tmp_path / "base", tmp_path / "head"
    for folder in DEMO_FOLDERS:
        shutil.copytree(ROOT / folder, base / folder)
    shutil.copytree(base, head)
    broken_e5(head / "catalog/runtimes/vllm")

    code, out, err = whatif("--cluster", "demo", broken_e5(tmp_path / "pr"), "--json")
    trees = subprocess.run(
        [sys.executable, "-m", "matching", "diff", str(base), str(head), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )

    assert (code, err) == (0, "")
    assert trees.returncode == 0, trees.stderr
    cluster_section = json.loads(out)["sections"][0]
    tree_section = json.loads(trees.stdout)["sections"][0]
    assert without_places(cluster_section["rows"]) == without_places(tree_section["rows"])
    assert [(row["namespace"], row["everywhere"]) for row in cluster_section["rows"]] == [("", True)]
    assert cluster_section["summary"]["rowsCompared"] == 4
    runtime_line = 1  # the runtime's document starts at its file's first line
    for section, folder in ((cluster_section, tmp_path / "pr"), (tree_section, head / "catalog/runtimes/vllm")):
        places = {(row["at"]["file"], row["at"]["line"], row["at"]["side"]) for row in section["rows"]}
        assert places == {(str(folder / E5_RUNTIME.name), runtime_line, "head")}
    assert cluster_section["summary"]["isvcsCompared"] == tree_section["summary"]["isvcsCompared"] == 10


@pytest.mark.django_db
def test_an_inference_service_in_the_manifests_that_names_a_missing_runtime_is_rejected(
    demo: Cluster, tmp_path: Path
) -> None:
    service = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "new-chat", "namespace": "team-a"},
        "spec": {"model": {"name": E5_MODEL}, "runtime": {"name": "no-such-runtime"}},
    }
    (tmp_path / "isvc.yaml").write_text(yaml.safe_dump(service))

    code, out, _err = whatif("--cluster", "demo", tmp_path / "isvc.yaml", "--fail-on", "isvc-rejected", "--json")

    assert code == 1
    (change,) = json.loads(out)["sections"][0]["isvcs"]
    assert change["isvc"]["name"] == "new-chat"
    assert (change["oldVerdict"], change["newVerdict"]) == (None, "blocked")
    assert "runtime no-such-runtime not found in namespace team-a" in change["reason"]


@pytest.mark.django_db
def test_prune_counts_what_the_tree_lacks_as_deleted(demo: Cluster, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "demo", tmp_path / "demo")  # models, the seed runtime, none of the catalog's

    code, out, _err = whatif("--cluster", "demo", tmp_path / "demo", "--prune", "--json", "--fail-on", "lost-runtime")

    assert code == 1
    section = json.loads(out)["sections"][0]
    removed = [item for item in section["objects"] if item["action"] == "removed"]
    assert len(removed) == 203
    assert {item["kind"] for item in removed} == {"ClusterServingRuntime"}
    lost = [row for row in section["rows"] if "lost-runtime" in row["conditions"]]
    assert section["summary"]["conditions"]["lost-runtime"] == len(lost) > 50
    folded = [row["model"]["name"] for row in lost if row["everywhere"]]
    assert folded
    assert len(folded) == len(set(folded))
    assert not {row["model"]["name"] for row in lost if not row["everywhere"]} & set(folded)


@pytest.mark.django_db
def test_all_clusters_reports_each_cluster(demo: Cluster, tmp_path: Path) -> None:
    other = Cluster.objects.create(name="edge", source=Cluster.Source.MANIFESTS)
    runtime = yaml.safe_load(E5_RUNTIME.read_text())
    snapshot_apply(
        other,
        Kind.CLUSTER_SERVING_RUNTIME,
        {("ClusterServingRuntime", "", "vllm-e5-mistral-7b-instruct"): runtime},
        prune=True,
    )
    model = Resource.objects.get(cluster=demo, kind=Kind.CLUSTER_BASE_MODEL, name=E5_MODEL).obj
    snapshot_apply(other, Kind.CLUSTER_BASE_MODEL, {("ClusterBaseModel", "", E5_MODEL): model}, prune=True)
    junit = tmp_path / "junit.xml"

    code, out, err = whatif("--all-clusters", broken_e5(tmp_path / "pr"), "--junit", junit, "--fail-on", "lost-runtime")

    assert code == 1, err
    assert "== cluster demo" in out
    assert "== cluster edge" in out
    assert "Models that lose their runtime (1):" in out  # edge has no other runtime for the model
    assert '<testsuite name="cluster edge" tests="1" failures="1">' in junit.read_text()


@pytest.mark.django_db
def test_bad_input_exits_2_naming_the_file_and_field(demo: Cluster, tmp_path: Path) -> None:
    runtime = yaml.safe_load(E5_RUNTIME.read_text())
    runtime["spec"]["supportedModelFormats"][0]["priority"] = "high"
    (tmp_path / "rt.yaml").write_text(yaml.safe_dump(runtime))

    code, out, err = whatif("--cluster", "demo", tmp_path / "rt.yaml")

    assert (code, out) == (2, "")
    line = (tmp_path / "rt.yaml").read_text().splitlines().index("    priority: high") + 1
    assert err.startswith(
        f"{tmp_path / 'rt.yaml'}: document 0, line {line}: ClusterServingRuntime vllm-e5-mistral-7b-instruct: "
    )
    assert "spec.supportedModelFormats[0].priority" in err


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--cluster", "nope"], "no cluster named 'nope'"),
        (["--cluster", "demo", "--fail-on", "typo"], "--fail-on: unknown condition 'typo'"),
        (["--cluster", "demo", "/no/such/dir"], "/no/such/dir: no such file or folder"),
        (["--cluster", "demo", "EMPTY"], "no BaseModel, ClusterBaseModel, ServingRuntime"),
    ],
    ids=["cluster", "condition", "path", "empty"],
)
def test_bad_options_exit_2(demo: Cluster, tmp_path: Path, args: list[str], expected: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    args = [str(empty) if arg == "EMPTY" else arg for arg in args]
    given_path = any(arg.startswith("/") for arg in args)
    code, _out, err = whatif(*args, *([] if given_path else [str(broken_e5(tmp_path / "pr"))]))

    assert code == 2
    assert expected in err


# ------------------------------------------------------------------------------------------
# The API


@pytest.fixture
def ci_token(db: None) -> str:
    user = User.objects.create_user("ci")
    grant(user, "viewer")  # a CI account reads the clusters it checks
    return api_token_create(user, name="ci")[1]


def post(client: APIClient, body: dict[str, Any]) -> Any:
    return client.post("/api/v1/whatif/check/", body, format="json")


@pytest.mark.django_db
def test_the_api_checks_with_a_token_and_renders_markdown(demo: Cluster, settings: Settings, ci_token: str) -> None:
    settings.API_ANONYMOUS_READ = False
    client = APIClient()
    manifest = E5_RUNTIME.read_text().replace('version: "4.34.0"', 'version: "9.99.0"')
    body = {"cluster": "demo", "manifests": manifest, "fail_on": "new-exclusion", "format": "markdown"}

    assert post(client, body).status_code == 401
    client.credentials(HTTP_AUTHORIZATION=f"Token {ci_token}")
    response = post(client, body)

    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["exit_code"], data["failed"], data["found"]) == (1, True, {"new-exclusion": 1})
    assert data["sections"][0]["title"] == "cluster demo"
    assert data["rendered"].startswith("### ❌ OME runtime selection: FAILED: new-exclusion (1)")


@pytest.mark.django_db
def test_the_api_names_the_document_and_field_of_a_bad_manifest(demo: Cluster) -> None:
    runtime = yaml.safe_load(E5_RUNTIME.read_text())
    runtime["spec"]["supportedModelFormats"][0]["priority"] = "high"
    text = "kind: Namespace\nmetadata: {name: x}\n---\n" + yaml.safe_dump(runtime)

    response = post(APIClient(), {"cluster": "demo", "manifests": text})

    assert response.status_code == 400
    detail = response.json()
    assert detail["field"] == "spec.supportedModelFormats[0].priority"
    assert detail["detail"].startswith("document 2: ClusterServingRuntime vllm-e5-mistral-7b-instruct: ")


@pytest.mark.django_db
def test_the_api_refuses_to_check_nothing(demo: Cluster) -> None:
    response = post(APIClient(), {"cluster": "demo", "manifests": "kind: Namespace\nmetadata: {name: x}\n"})

    assert response.status_code == 400
    assert response.json()["field"] == "manifests"


@pytest.mark.django_db
def test_the_api_refuses_an_unknown_condition(demo: Cluster) -> None:
    response = post(APIClient(), {"cluster": "demo", "manifests": "", "fail_on": "lost-runtime,nope"})

    assert response.status_code == 400
    assert response.json()["field"] == "fail_on"
    assert response.json()["detail"].startswith("unknown condition 'nope'")
