"""Synthetic OME inventories for benchmarks: runtimes cloned from the catalog with variations,
and models built to match (or narrowly miss) them."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

from matching import read_documents

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "catalog"


def catalog_objects(kind: str, folder: str, *, root: Path = CATALOG) -> list[dict[str, Any]]:
    return [doc.obj for doc in read_documents([root / folder]) if doc.obj is not None and doc.obj.get("kind") == kind]


def synthetic_runtimes(count: int, *, seed: int = 1, namespaces: int = 5) -> list[dict[str, Any]]:
    """`count` runtimes: catalog runtimes renamed, a tenth of them namespaced, some disabled."""
    rng = random.Random(seed)
    templates = catalog_objects("ClusterServingRuntime", "runtimes")
    runtimes = []
    for index in range(count):
        runtime = copy.deepcopy(templates[index % len(templates)])
        runtime["metadata"] = {"name": f"{runtime['metadata']['name']}-{index}"}
        if index % 10 == 9:
            runtime["kind"] = "ServingRuntime"
            runtime["metadata"]["namespace"] = f"team-{index % namespaces}"
        spec = runtime["spec"]
        spec["disabled"] = rng.random() < 0.03
        for entry in spec.get("supportedModelFormats", []):
            entry["priority"] = rng.choice([1, 1, 1, 2, 3])
            entry["autoSelect"] = rng.random() < 0.8
        runtimes.append(runtime)
    return runtimes


def _model_for(entry: dict[str, Any], size_range: dict[str, str] | None, rng: random.Random) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "modelFormat": dict(entry.get("modelFormat") or {"name": "safetensors"}),
        "modelArchitecture": entry.get("modelArchitecture", "LlamaForCausalLM"),
        "storage": {"storageUri": "hf://example/model"},
    }
    if entry.get("modelFramework"):
        framework = dict(entry["modelFramework"])
        if rng.random() < 0.2:
            framework["version"] = f"4.{rng.randint(30, 60)}.{rng.randint(0, 3)}"
        spec["modelFramework"] = framework
    if entry.get("quantization"):
        spec["quantization"] = entry["quantization"]
    if size_range and size_range.get("min"):
        spec["modelParameterSize"] = size_range["min"] if rng.random() < 0.9 else "1T"
    return spec


def synthetic_models(
    count: int, runtimes: list[dict[str, Any]], *, signatures: int, seed: int = 2
) -> list[dict[str, Any]]:
    """`count` models drawn from `signatures` distinct matching-relevant shapes."""
    rng = random.Random(seed)
    shapes = []
    for index in range(signatures):
        runtime = runtimes[index % len(runtimes)]
        entries = runtime["spec"].get("supportedModelFormats") or [{}]
        shapes.append(_model_for(rng.choice(entries), runtime["spec"].get("modelSizeRange"), rng))
    models = []
    for index in range(count):
        namespaced = index % 7 == 6
        metadata: dict[str, Any] = {"name": f"model-{index}"}
        if namespaced:
            metadata["namespace"] = f"team-{index % 5}"
        models.append(
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "BaseModel" if namespaced else "ClusterBaseModel",
                "metadata": metadata,
                "spec": copy.deepcopy(shapes[index % signatures]),
            }
        )
    return models
