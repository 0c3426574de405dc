"""The seed page's case: which files hold it, the names, and the patch that makes it match."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

BASE = Path(__file__).resolve().parents[2]
# The seed page's model and runtime, the catalog runtime that serves the model unpatched, and
# the catalog model that already records its pipeline.
SEED_FILES = [
    BASE / "demo/seed",
    BASE / "catalog/runtimes/srt/Qwen/Qwen-Image-rt.yaml",
    BASE / "demo/models/Qwen/Qwen-Image.yaml",
]
MODEL = "ClusterBaseModel/qwen-image-pvc"
RUNTIME = "ClusterServingRuntime/srt-qwen-image-pipeline"
PIPELINE = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}
SEED_PATCH = {"spec": {"diffusionPipeline": PIPELINE}}

TEAM_MODEL = """
apiVersion: ome.io/v1beta1
kind: BaseModel
metadata:
  name: qwen-image-team
  namespace: team-a
spec:
  modelFormat: {name: diffusers, version: "0.34.0.dev0"}
  modelFramework: {name: diffusers, version: "0.34.0.dev0"}
  modelArchitecture: QwenImagePipeline
  storage: {storageUri: "pvc://team-a:models/Qwen-Image"}
"""


@functools.cache
def documents() -> tuple[dict[str, Any], ...]:
    """The seed objects, parsed once per run (the fake's own loader uses the slow pure-Python YAML)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    files = sorted(p for path in SEED_FILES for p in ([path] if path.is_file() else path.glob("*.yaml")))
    found = [doc for file in files for doc in yaml.load_all(file.read_text(), Loader=loader) if doc]
    return (*found, yaml.load(TEAM_MODEL, Loader=loader))
