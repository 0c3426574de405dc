"""`python -m matching explain`: the table, --json, and one clear line per bad file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SEED_RUNTIME = ROOT / "demo/seed/clusterservingruntime-srt-qwen-image-pipeline.yaml"
CATALOG_RUNTIME = ROOT / "catalog/runtimes/srt/Qwen/Qwen-Image-rt.yaml"
PVC_MODEL = ROOT / "demo/seed/clusterbasemodel-qwen-image-pvc.yaml"


def explain(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "matching", "explain", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def test_explain_prints_the_pick_and_why_every_other_runtime_is_not_picked() -> None:
    result = explain(PVC_MODEL, SEED_RUNTIME, CATALOG_RUNTIME)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "Selected: srt-qwen-image" in lines
    excluded = next(line for line in lines if "srt-qwen-image-pipeline" in line)
    assert "excluded" in excluded
    assert "diffusion pipeline required by runtime but not specified in model" in excluded


def test_explain_json_is_select_to_dict(tmp_path: Path) -> None:
    import yaml

    import matching

    result = explain(PVC_MODEL, SEED_RUNTIME, CATALOG_RUNTIME, "--json")

    model = matching.as_applied(yaml.safe_load(PVC_MODEL.read_text()))
    runtimes = [matching.as_applied(yaml.safe_load(path.read_text())) for path in (SEED_RUNTIME, CATALOG_RUNTIME)]
    assert json.loads(result.stdout) == matching.select(model, runtimes).to_dict()


def test_explain_applies_the_crd_defaults_unless_raw() -> None:
    import yaml

    import matching

    applied = json.loads(explain(PVC_MODEL, SEED_RUNTIME, CATALOG_RUNTIME, "--json").stdout)
    raw = json.loads(explain(PVC_MODEL, SEED_RUNTIME, CATALOG_RUNTIME, "--json", "--raw").stdout)

    # Section 9 of the spec: srt-qwen-image scores 2 with the CRD defaults, 15 as raw YAML.
    assert [(m["name"], m["score"]) for m in applied["compatible"]] == [("srt-qwen-image", 2)]
    assert [(m["name"], m["score"]) for m in raw["compatible"]] == [("srt-qwen-image", 15)]
    model = yaml.safe_load(PVC_MODEL.read_text())
    runtimes = [yaml.safe_load(path.read_text()) for path in (SEED_RUNTIME, CATALOG_RUNTIME)]
    assert raw == matching.select(model, runtimes).to_dict()


def test_explain_judges_by_the_profile_asked_for(tmp_path: Path) -> None:
    runtime = tmp_path / "rt.yaml"
    runtime.write_text(
        "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: half-open}\nspec:\n"
        "  modelSizeRange: {min: 1B}\n  supportedModelFormats:\n"
        "  - {modelFormat: {name: diffusers, version: 0.34.0.dev0}, modelFramework: {name: diffusers, version: 0.34.0.dev0},"
        " modelArchitecture: QwenImagePipeline, autoSelect: true}\n"
    )
    model = tmp_path / "m.yaml"
    model.write_text(PVC_MODEL.read_text().replace("spec:", "spec:\n  modelParameterSize: 20B", 1))

    newest = explain(model, runtime)
    older = explain(model, runtime, "--behaviour", "17b77eda")

    assert "Selected: half-open" in newest.stdout
    assert "OME: profile 17b77eda" in older.stdout
    assert "No runtime: OME 17b77eda crashes (nil pointer dereference) on runtime half-open" in older.stdout
    assert explain(model, runtime, "--behaviour", "v9").returncode == 2


def test_every_argument_is_explained_in_the_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "matching", "explain", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    help_text = " ".join(result.stdout.split())
    for argument in (
        "MODEL_FILE a YAML",
        "RUNTIME_PATH files or folders",
        "--isvc FILE an",
        "--namespace NS the",
        "--json print",
        "--raw read the files as written",
        "--behaviour NAME the OME",
    ):
        assert argument in help_text


def test_explain_reads_folders_and_skips_other_kinds() -> None:
    result = explain(PVC_MODEL, ROOT / "catalog/runtimes", "--namespace", "team-a")

    assert result.returncode == 0, result.stderr
    assert "(namespace: team-a)" in result.stdout
    assert "Selected: srt-qwen-image" in result.stdout


def test_explain_with_an_inference_service_validates_the_runtime_it_names(tmp_path: Path) -> None:
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text(
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: img, namespace: research}\n"
        "spec:\n  model: {name: qwen-image-pvc}\n  runtime: {name: srt-qwen-image-pipeline}\n"
    )

    result = explain(PVC_MODEL, SEED_RUNTIME, CATALOG_RUNTIME, "--isvc", isvc)

    assert (
        "Named runtime: srt-qwen-image-pipeline: runtime srt-qwen-image-pipeline does not support model diffusers:"
        in (result.stdout)
    )


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("kind: [unclosed\n", "invalid YAML"),
        (
            "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: m}\nspec: []\n",
            "spec: expected a mapping",
        ),
        (
            "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: m}\n"
            "spec: {modelFormat: {name: safetensors, version: 1.0}}\n",
            "spec.modelFormat.version: expected a string, got float",
        ),
    ],
    ids=["yaml", "spec", "version"],
)
def test_a_bad_file_gets_one_line_naming_file_and_document_and_exit_status_2(
    tmp_path: Path, content: str, problem: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("---\n" + content if problem != "invalid YAML" else content)

    result = explain(bad, CATALOG_RUNTIME)

    assert result.returncode == 2
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{bad}: document 0")
    assert problem in line


def test_a_file_without_a_model_is_named(tmp_path: Path) -> None:
    result = explain(CATALOG_RUNTIME, CATALOG_RUNTIME)

    assert result.returncode == 2
    assert "no BaseModel or ClusterBaseModel found" in result.stderr
