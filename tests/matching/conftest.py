"""Small factories for the spec-derived conformance tests (tests/matching/test_conformance_*.py).

The objects are plain dicts shaped like the Kubernetes objects OME reads (apiVersion
ome.io/v1beta1). Every factory takes the spec fields as keyword arguments in OME's JSON
(camelCase) spelling and copies them as given, so "absent" (key left out) and "present but
empty" ("" / {} / []) stay apart exactly as the spec requires (section 1.5).

The factories are handed to tests through the `k` fixture (`k.model(...)`, `k.csr(...)`), so
test modules never import this file.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

import pytest

API_VERSION = "ome.io/v1beta1"

#: Marks a key to drop from a preset (`k.llama(modelArchitecture=k.DROP)`).
DROP = object()


def _apply(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in overrides.items():
        if value is DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def ref(
    name: str, version: str | None = None, operator: str | None = None, weight: int | None = None
) -> dict[str, Any]:
    """A `modelFormat` / `modelFramework` object; None leaves the key out (absent)."""
    out: dict[str, Any] = {"name": name}
    if version is not None:
        out["version"] = version
    if operator is not None:
        out["operator"] = operator
    if weight is not None:
        out["weight"] = weight
    return out


def _obj(
    kind: str, name: str, namespace: str | None, spec: dict[str, Any], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if annotations is not None:
        metadata["annotations"] = annotations
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


def model(name: str = "m", *, namespace: str | None = None, kind: str | None = None, **spec: Any) -> dict[str, Any]:
    """A ClusterBaseModel, or a BaseModel when a namespace is given."""
    kind = kind or ("BaseModel" if namespace is not None else "ClusterBaseModel")
    spec.setdefault("storage", {"storageUri": "hf://org/model"})
    return _obj(kind, name, namespace, spec)


def entry(**fields: Any) -> dict[str, Any]:
    """One supportedModelFormats entry, exactly as given."""
    return dict(fields)


def csr(name: str, *entries: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A ClusterServingRuntime; positional entries become supportedModelFormats."""
    if entries:
        spec["supportedModelFormats"] = list(entries)
    return _obj("ClusterServingRuntime", name, None, spec)


def sr(name: str, *entries: dict[str, Any], namespace: str = "team", **spec: Any) -> dict[str, Any]:
    """A ServingRuntime in `namespace` (default `team`)."""
    if entries:
        spec["supportedModelFormats"] = list(entries)
    return _obj("ServingRuntime", name, namespace, spec)


def isvc(
    name: str = "svc",
    *,
    namespace: str = "team",
    annotations: dict[str, str] | None = None,
    model_name: str = "m",
    **spec: Any,
) -> dict[str, Any]:
    """An InferenceService with `spec.model.name` and an engine."""
    spec.setdefault("model", {"name": model_name})
    spec.setdefault("engine", {"minReplicas": 1, "maxReplicas": 1})
    return _obj("InferenceService", name, namespace, spec, annotations)


# --- presets -------------------------------------------------------------------------------

#: The LLM used by the spec's worked examples (sections 2.3 and 5.4).
LLAMA_SPEC: dict[str, Any] = {
    "modelFormat": ref("safetensors", "1.0.0"),
    "modelFramework": ref("transformers", "4.51.0"),
    "modelArchitecture": "LlamaForCausalLM",
}

#: An entry that matches LLAMA_SPEC exactly and is auto-selectable.
LLAMA_ENTRY: dict[str, Any] = {
    "modelFormat": ref("safetensors", "1.0.0"),
    "modelFramework": ref("transformers", "4.51.0"),
    "modelArchitecture": "LlamaForCausalLM",
    "autoSelect": True,
}

#: The seed page's model qwen-image-pvc (section 9), before the patch.
QWEN_SPEC: dict[str, Any] = {
    "modelFormat": ref("diffusers", "0.34.0.dev0"),
    "modelFramework": ref("diffusers", "0.34.0.dev0"),
    "modelArchitecture": "QwenImagePipeline",
    "storage": {"storageUri": "pvc://models/qwen-image"},
}

QWEN_LABEL = "mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0"

#: The seed page's runtime entry (srt-qwen-image-pipeline).
QWEN_PIPELINE_ENTRY: dict[str, Any] = {
    "modelFormat": ref("diffusers", "0.34.0.dev0"),
    "modelFramework": ref("diffusers", "0.34.0.dev0"),
    "modelArchitecture": "QwenImagePipeline",
    "diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}},
    "autoSelect": True,
    "priority": 2,
}

#: The catalog runtime srt-qwen-image as section 9 describes it: priority 1, no pipeline.
QWEN_PLAIN_ENTRY: dict[str, Any] = {
    "modelFormat": ref("diffusers", "0.34.0.dev0"),
    "modelFramework": ref("diffusers", "0.34.0.dev0"),
    "modelArchitecture": "QwenImagePipeline",
    "autoSelect": True,
    "priority": 1,
}


def llama(name: str = "llama-8b", *, namespace: str | None = None, **overrides: Any) -> dict[str, Any]:
    return model(name, namespace=namespace, **_apply(LLAMA_SPEC, overrides))


def llama_entry(**overrides: Any) -> dict[str, Any]:
    return _apply(LLAMA_ENTRY, overrides)


def qwen(name: str = "qwen-image-pvc", **overrides: Any) -> dict[str, Any]:
    return model(name, **_apply(QWEN_SPEC, overrides))


def qwen_pipeline_runtime(**entry_overrides: Any) -> dict[str, Any]:
    return csr("srt-qwen-image-pipeline", _apply(QWEN_PIPELINE_ENTRY, entry_overrides))


def qwen_plain_runtime() -> dict[str, Any]:
    return csr("srt-qwen-image", copy.deepcopy(QWEN_PLAIN_ENTRY))


def excluded_items(error: str) -> tuple[str, set[str]]:
    """Split a NoRuntimeFoundError into its fixed head and the set of excluded items.

    OME's item order is random (quirk Q5), so the items are compared as a set. Items are
    split on "; ", which is safe only for reasons that do not themselves contain "; "
    (single-entry format reasons, size, disabled and accelerator reasons).
    """
    head, sep, tail = error.partition(". Excluded runtimes: ")
    if not sep:
        return error, set()
    return head, set(tail.split("; "))


FACTORIES = SimpleNamespace(
    DROP=DROP,
    ref=ref,
    model=model,
    entry=entry,
    csr=csr,
    sr=sr,
    isvc=isvc,
    llama=llama,
    llama_entry=llama_entry,
    qwen=qwen,
    qwen_pipeline_runtime=qwen_pipeline_runtime,
    qwen_plain_runtime=qwen_plain_runtime,
    excluded_items=excluded_items,
    QWEN_LABEL=QWEN_LABEL,
    LLAMA_LABEL="mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.51.0",
)


@pytest.fixture
def k() -> SimpleNamespace:
    """The object factories (see the module docstring)."""
    return FACTORIES
