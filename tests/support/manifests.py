"""Small OME manifests for tests that build their own inventories."""

from __future__ import annotations

from typing import Any


def llama_model(name: str, *, namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    """A safetensors / transformers 4.51.0 LlamaForCausalLM model; `spec` adds or overrides
    fields. A namespace makes it a BaseModel."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "kind": "BaseModel" if namespace else "ClusterBaseModel",
        "metadata": metadata,
        "spec": {
            "modelFormat": {"name": "safetensors", "version": "1.0.0"},
            "modelFramework": {"name": "transformers", "version": "4.51.0"},
            "modelArchitecture": "LlamaForCausalLM",
            **spec,
        },
    }
