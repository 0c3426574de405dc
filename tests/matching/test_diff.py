"""`python -m matching diff BASE HEAD`: what changes in OME's decisions between two manifest
trees, in every format, with --fail-on exit codes and one clear line per bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

import matching

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "matching", "diff", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def model(name: str = "llama", *, version: str = "4.40.0", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": name},
        "spec": {
            "modelFormat": {"name": "safetensors", "version": "1.0.0"},
            "modelFramework": {"name": "transformers", "version": version},
            "modelArchitecture": "LlamaForCausalLM",
            "storage": {"storageUri": "hf://meta/llama"},
            **spec,
        },
    }


def runtime(name: str, *, framework: str = "4.50.0", priority: int = 1, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {
            "supportedModelFormats": [
                {
                    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
                    "modelFramework": {"name": "transformers", "version": framework, "operator": "GreaterThan"},
                    "modelArchitecture": "LlamaForCausalLM",
                    "autoSelect": True,
                    "priority": priority,
                }
            ],
            **spec,
        },
    }


def isvc(name: str, runtime_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"model": {"name": "llama"}}
    if runtime_name:
        spec["runtime"] = {"name": runtime_name}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": name, "namespace": "team-a"},
        "spec": spec,
    }


def tree(root: Path, *objects: dict[str, Any]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for index, obj in enumerate(objects):
        (root / f"{index:02}-{obj['metadata']['name']}.yaml").write_text(yaml.safe_dump(obj))
    return root


def diff_json(tmp_path: Path, base: list[dict[str, Any]], head: list[dict[str, Any]], *args: str) -> dict[str, Any]:
    result = run(tree(tmp_path / "base", *base), tree(tmp_path / "head", *head), "--json", *args)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)["sections"][0]


def test_a_runtime_that_stops_matching_loses_the_model_its_runtime_with_the_reason(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", model(), runtime("vllm"))
    head = tree(tmp_path / "head", model(), runtime("vllm", framework="4.30.0"))

    result = run(base, head, "--fail-on", "lost-runtime")

    assert result.returncode == 1, result.stderr
    assert "Models that lose their runtime (1):" in result.stdout
    assert "ClusterBaseModel llama in cluster scope: ClusterServingRuntime vllm (score" in result.stdout
    assert "framework version mismatch (model=4.40.0, runtime=4.30.0)" in result.stdout
    assert "FAILED: lost-runtime (1)" in result.stdout


def test_fail_on_other_conditions_exits_0_and_says_none_occurs(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", model(), runtime("vllm"))
    head = tree(tmp_path / "head", model(), runtime("vllm", framework="4.30.0"))

    result = run(base, head, "--fail-on", "isvc-rejected,gained-runtime")

    assert result.returncode == 0, result.stderr
    assert "OK: none of gained-runtime, isvc-rejected occurs." in result.stdout


def test_json_lists_the_cells_rows_and_conditions(tmp_path: Path) -> None:
    section = diff_json(
        tmp_path,
        [model(), runtime("vllm")],
        [model(), runtime("vllm", framework="4.30.0")],
        "--fail-on",
        "new-exclusion",
    )

    assert section["objects"] == [
        {"kind": "ClusterServingRuntime", "namespace": "", "name": "vllm", "action": "changed"}
    ]
    (row,) = section["rows"]
    assert (row["oldOutcome"], row["newOutcome"]) == ("selected", "no-runtime")
    assert row["oldPick"]["name"] == "vllm"
    assert row["newPick"] is None
    assert row["error"].startswith("no runtime found to support model safetensors")
    assert set(row["conditions"]) == {"lost-runtime", "new-exclusion", "cell-changed", "any-change"}
    (cell,) = row["cells"]
    assert (cell["oldStatus"], cell["newStatus"]) == ("selected", "excluded")
    assert section["summary"]["conditions"]["new-exclusion"] == 1


def test_a_better_runtime_changes_the_pick_and_says_why(tmp_path: Path) -> None:
    section = diff_json(tmp_path, [model(), runtime("vllm")], [model(), runtime("vllm"), runtime("srt", priority=5)])

    (row,) = section["rows"]
    assert "pick-changed" in row["conditions"]
    assert (row["oldPick"]["name"], row["newPick"]["name"]) == ("vllm", "srt")
    assert row["reason"].startswith("ClusterServingRuntime srt (score")
    assert "now ranks above ClusterServingRuntime vllm" in row["reason"]
    statuses = {cell["runtime"]["name"]: (cell["oldStatus"], cell["newStatus"]) for cell in row["cells"]}
    assert statuses == {"srt": (None, "selected"), "vllm": ("selected", "compatible")}


def test_an_inference_service_whose_named_runtime_is_disabled_is_rejected(tmp_path: Path) -> None:
    base = [model(), runtime("vllm"), isvc("chat", "vllm")]
    head = [model(), runtime("vllm", disabled=True), isvc("chat", "vllm")]

    section = diff_json(tmp_path, base, head)

    (change,) = section["isvcs"]
    assert change["isvc"] == {"kind": "InferenceService", "namespace": "team-a", "name": "chat"}
    assert (change["oldVerdict"], change["newVerdict"]) == ("named", "blocked")
    assert "disabled" in change["reason"]
    assert "isvc-rejected" in change["conditions"]
    result = run(tmp_path / "base", tmp_path / "head", "--fail-on", "isvc-rejected")
    assert result.returncode == 1
    assert "InferenceServices OME would now reject (1):" in result.stdout


def test_crd_defaults_apply_so_explicit_defaults_change_nothing(tmp_path: Path) -> None:
    explicit = runtime("vllm")
    entry = explicit["spec"]["supportedModelFormats"][0]
    entry["modelFormat"].update(operator="Equal", weight=1)
    entry["modelFramework"]["weight"] = 1
    defaulted = model()
    spelled = model()
    spelled["spec"]["modelFormat"].update(operator="Equal", weight=1)
    spelled["spec"]["modelFramework"].update(operator="Equal", weight=1)

    section = diff_json(tmp_path, [defaulted, runtime("vllm")], [spelled, explicit], "--fail-on", "any-change")

    assert section["rows"] == []
    assert section["isvcs"] == []


def test_the_demo_tree_against_itself_changes_nothing(tmp_path: Path) -> None:
    result = run(ROOT / "demo", ROOT / "demo", "--fail-on", "any-change")

    assert result.returncode == 0, result.stderr
    assert "No change in OME's decisions." in result.stdout


def test_junit_marks_cases_with_fail_on_conditions_failed(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", model(), model("other", version="4.10.0"), runtime("vllm"))
    head = tree(tmp_path / "head", model(), model("other", version="4.10.0"), runtime("vllm", framework="4.30.0"))
    report = tmp_path / "out" / "junit.xml"
    report.parent.mkdir()

    result = run(base, head, "--junit", report, "--fail-on", "lost-runtime")

    assert result.returncode == 1
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite is not None
    assert suite.get("failures") == "1"
    (case,) = suite.findall("testcase")
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "lost-runtime"
    assert "framework version mismatch" in (failure.text or "")


def test_markdown_escapes_text_from_manifests(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", model(), runtime("vllm"))
    head = tree(tmp_path / "head", model(), runtime("vllm", framework="<img src=x onerror=alert(1)>"))

    result = run(base, head, "--markdown", "--fail-on", "lost-runtime")

    assert result.returncode == 1
    assert result.stdout.startswith("### ❌ OME runtime selection: FAILED: lost-runtime (1)")
    assert "<img" not in result.stdout
    assert "&lt;img src=x onerror=alert(1)&gt;" in result.stdout


def test_hidden_folders_and_other_kinds_are_not_read(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", model(), runtime("vllm"))
    head = tree(tmp_path / "head", model(), runtime("vllm"))
    (head / ".git").mkdir()
    (head / ".git" / "broken.yaml").write_text("{ not yaml")
    kserve = {"apiVersion": "serving.kserve.io/v1beta1", "kind": "InferenceService", "metadata": {"name": "x"}}
    (head / "kserve.yaml").write_text(yaml.safe_dump(kserve))

    result = run(base, head, "--fail-on", "any-change")

    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("kind: [unclosed", "document 0: invalid YAML"),
        (
            yaml.safe_dump(runtime("vllm", priority="high")),  # type: ignore[arg-type]
            "ClusterServingRuntime vllm: spec.supportedModelFormats[0].priority:",
        ),
    ],
    ids=["yaml", "field"],
)
def test_bad_input_names_the_side_file_and_field_and_exits_2(tmp_path: Path, content: str, expected: str) -> None:
    base = tree(tmp_path / "base", model(), runtime("vllm"))
    head = tmp_path / "head"
    shutil.copytree(base, head)
    (head / "01-vllm.yaml").write_text(content)

    result = run(base, head, "--fail-on", "lost-runtime")

    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"HEAD_PATH {head / '01-vllm.yaml'}: ")
    assert expected in result.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--fail-on", "lost-runtime,typo"], "--fail-on: unknown condition 'typo'; known: lost-runtime"),
        (["--junit", "/nonexistent/dir/junit.xml"], "--junit /nonexistent/dir/junit.xml: cannot write"),
    ],
    ids=["condition", "junit"],
)
def test_bad_options_exit_2_with_one_line(tmp_path: Path, args: list[str], expected: str) -> None:
    base = tree(tmp_path / "base", model(), runtime("vllm"))

    result = run(base, base, *args)

    assert result.returncode == 2
    assert result.stderr.startswith(expected)


def test_a_missing_tree_is_named(tmp_path: Path) -> None:
    result = run(tmp_path / "nope", ROOT / "demo")

    assert result.returncode == 2
    assert result.stderr.strip() == f"BASE_PATH {tmp_path / 'nope'}: no such file or folder"


def test_diff_of_parsed_objects_matches_the_command(tmp_path: Path) -> None:
    base = matching.objects_of([(obj, matching.parse_object(obj)) for obj in (model(), runtime("vllm"))])
    head_objects = (model(), runtime("vllm", framework="4.30.0"))
    head = matching.objects_of([(obj, matching.parse_object(obj)) for obj in head_objects])

    result = matching.diff(base, head)

    assert [row.conditions for row in result.lost] == [{"lost-runtime", "new-exclusion", "cell-changed", "any-change"}]
    assert result.counts()["lost-runtime"] == 1


def test_two_trees_without_any_ome_object_are_bad_input(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "deploy.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")

    result = run(tmp_path / "a", tmp_path / "b")

    assert result.returncode == 2
    assert "holds an OME object" in result.stderr
