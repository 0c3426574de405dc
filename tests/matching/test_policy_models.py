"""`scope.models`: policy subjects selected by what the models are (issue 33, item 4), in CI
(`python -m matching check`) and in the pure evaluation. The facts are the model spec fields
OME's model agent records (ome-docs concepts/models/base-models.md)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from matching import parse_model
from matching.policy import PolicyError, load_policies
from matching.policy.models import ModelSelector
from tests.support.policies import DIFFUSION_POLICY as POLICY

ROOT = Path(__file__).resolve().parents[2]
NEW_MODEL = """apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata: {name: new-diffusion-model}
spec:
  modelFormat: {name: diffusers, version: "0.35.0"}
  modelArchitecture: NoSuchPipeline
  storage: {storageUri: "hf://example/new-diffusion-model"}
"""


def check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "matching", "check", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for part in ("demo", "catalog/runtimes"):
        shutil.copytree(ROOT / part, tmp_path / part)
    (tmp_path / "policy.yaml").write_text(POLICY)
    return tmp_path


def test_the_three_line_diffusion_policy_passes_in_ci_and_fails_for_a_diffusion_model_added_later(tree: Path) -> None:
    passing = check(tree / "demo", tree / "catalog/runtimes", "--policy", tree / "policy.yaml")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "PASS [error] diffusion/every-diffusion-model-has-a-runtime (hasRuntime, 16 checked)" in passing.stdout

    (tree / "demo/new-diffusion-model.yaml").write_text(NEW_MODEL)
    failing = check(tree / "demo", tree / "catalog/runtimes", "--policy", tree / "policy.yaml")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "FAIL [error] diffusion/every-diffusion-model-has-a-runtime (hasRuntime, 20 checked)" in failing.stdout
    assert "ClusterBaseModel new-diffusion-model in cluster scope: OME picks no runtime" in failing.stdout


MODEL = parse_model(
    {
        "kind": "ClusterBaseModel",
        "metadata": {"name": "m"},
        "spec": {
            "modelFormat": {"name": "safetensors"},
            "modelFramework": {"name": "transformers"},
            "modelArchitecture": "LlamaForCausalLM",
            "modelCapabilities": ["TEXT_TO_TEXT", "EMBEDDING"],
            "modelParameterSize": "8B",
            "storage": {"storageUri": "oci://n/bucket/o/llama"},
        },
    }
)


@pytest.mark.parametrize(
    ("raw", "selected"),
    [
        ({"formats": ["safetensors"]}, True),
        ({"formats": ["diffusers"]}, False),
        ({"architectures": ["Llama*"]}, True),
        ({"frameworks": ["transformers"]}, True),
        ({"pipelineClasses": ["*"]}, False),  # it records no pipeline
        ({"capabilities": ["EMBEDDING"]}, True),
        ({"capabilities": ["IMAGE_*"]}, False),
        ({"storageSchemes": ["oci"]}, True),
        ({"storageSchemes": ["hf", "pvc"]}, False),
        ({"size": {"min": "7B", "max": "9B"}}, True),
        ({"size": {"min": "8.5B"}}, False),
        ({"size": {"max": "8000M"}}, True),
        ({"formats": ["safetensors"], "architectures": ["Qwen*"]}, False),  # every field set narrows
    ],
)
def test_each_fact_selects(raw: dict[str, object], selected: bool) -> None:
    assert ModelSelector.from_raw(raw).matches(MODEL) is selected


def test_a_bad_selector_names_the_field(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(POLICY.replace("formats: [diffusers]", "format: [diffusers]"))
    with pytest.raises(PolicyError) as raised:
        load_policies([tmp_path / "p.yaml"])
    assert "spec.assertions[0].scope.models.format: unknown field 'format'" in str(raised.value)
