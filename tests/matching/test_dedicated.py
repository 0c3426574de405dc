"""Runtimes dedicated to one model (matching/dedicated.py), read from what their containers run.

Expectations come from the manifests: OME's catalog runtime srt-phi-2
(catalog/runtimes/srt/microsoft/phi-2-rt.yaml, from ome-projects/ome config/runtimes) passes
`--served-model-name microsoft/phi-2`; the runtime of ome-docs concepts/runtimes/serving-runtimes.md
passes `--served-model-name={{.Name}}` (the InferenceService's name) and `$(MODEL_PATH)`."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

import matching
from matching.dedicated import rewrite_for

ROOT = Path(__file__).resolve().parents[2]


def _load(path: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / path).read_text())
    return loaded


PHI = "catalog/runtimes/srt/microsoft/phi-2-rt.yaml"
GENERIC = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "ServingRuntime",
    "metadata": {"name": "sglang-llama-3-2-3b", "namespace": "llama-demo"},
    "spec": {
        "supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "autoSelect": True}],
        "engineConfig": {
            "runner": {
                "name": "ome-container",
                "command": ["python3", "-m", "sglang.launch_server"],
                "args": ["--model-path=$(MODEL_PATH)", "--served-model-name={{.Name}}", "--tp-size=1"],
            }
        },
    },
}


def test_a_catalog_runtime_is_dedicated_to_the_model_its_served_name_names() -> None:
    runtime = matching.parse_runtime(_load(PHI))
    phi = matching.parse_model(_load("demo/models/microsoft/phi-2.yaml"))
    gemma = matching.parse_model(_load("demo/models/google/gemma-2b.yaml"))

    assert runtime.dedication is not None
    assert runtime.dedication.served_names == ("microsoft/phi-2",)
    assert "--served-model-name microsoft/phi-2" in runtime.dedication.reasons
    assert not runtime.serves_as_other(phi)
    assert runtime.serves_as_other(gemma)


def test_a_runtime_with_a_placeholder_name_and_the_model_path_is_generic() -> None:
    runtime = matching.parse_runtime(GENERIC)
    assert runtime.dedication is None
    assert not runtime.serves_as_other(matching.parse_model(_load("demo/models/google/gemma-2b.yaml")))


def test_model_specific_settings_make_a_runtime_dedicated_and_are_named_for_review() -> None:
    obj = copy.deepcopy(GENERIC)
    obj["spec"]["engineConfig"]["runner"]["args"] += ["--tool-call-parser", "llama3_json", "--model-path=/raid/x"]
    found = matching.dedication(obj)
    gemma = matching.parse_model(_load("demo/models/google/gemma-2b.yaml"))

    assert found is not None
    assert [(item.flag, item.value) for item in found.arguments] == [
        ("--tool-call-parser", "llama3_json"),
        ("--model-path", "/raid/x"),
    ]
    rewrite = rewrite_for(obj["spec"], gemma)
    assert rewrite.changed == (("spec.engineConfig.runner.args[5]", "/raid/x", "$(MODEL_PATH)"),)
    assert rewrite.spec["engineConfig"]["runner"]["args"][5] == "--model-path=$(MODEL_PATH)"
    assert [(item.flag, item.value) for item in rewrite.unchanged] == [("--tool-call-parser", "llama3_json")]
    assert obj["spec"]["engineConfig"]["runner"]["args"][5] == "--model-path=/raid/x"  # the source is not changed


def test_a_derived_runtime_serves_the_model_under_its_own_name() -> None:
    phi = _load(PHI)
    model = _load("demo/models/google/gemma-2b.yaml")
    phi["spec"]["supportedModelFormats"][0]["modelArchitecture"] = "GemmaForCausalLM"  # closest: one check

    fix = matching.derived_runtime(model, phi, "srt-gemma-2b")

    assert fix is not None
    (created,) = fix.created
    command = created["spec"]["engineConfig"]["runner"]["command"]
    assert command[command.index("--served-model-name") + 1] == "google/gemma-2b"  # hf://google/gemma-2b
    assert created["spec"]["modelSizeRange"] == {"min": "2B", "max": "2B"}  # its modelParameterSize
    assert fix.review == ()
    assert any("microsoft/phi-2 becomes google/gemma-2b" in text for text in fix.changes)


def test_no_fix_is_proposed_on_a_runtime_dedicated_to_another_model() -> None:
    phi = _load(PHI)
    model = _load("demo/models/google/gemma-2b.yaml")
    generic = copy.deepcopy(phi)
    words = generic["spec"]["engineConfig"]["runner"]["command"]
    at = words.index("--served-model-name")
    del words[at : at + 2]

    assert matching.propose_fixes(model, phi) == ()
    assert matching.propose_fixes(model, generic)  # the same runtime without its served name
