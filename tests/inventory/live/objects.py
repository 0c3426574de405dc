"""OME objects for the live-cluster tests: small, valid ones of every kind, and broken ones."""

from __future__ import annotations

from typing import Any

API_VERSION = "ome.io/v1beta1"
FORMAT = {"name": "safetensors", "version": "1.0.0"}


def _obj(kind: str, name: str, namespace: str | None, spec: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


def model(name: str, namespace: str | None = None, *, architecture: str = "LlamaForCausalLM") -> dict[str, Any]:
    """A ClusterBaseModel, or a BaseModel when a namespace is given."""
    spec = {"modelFormat": FORMAT, "modelArchitecture": architecture, "storage": {"storageUri": f"hf://org/{name}"}}
    return _obj("BaseModel" if namespace else "ClusterBaseModel", name, namespace, spec)


def runtime(name: str, namespace: str | None = None, *, architecture: str = "LlamaForCausalLM") -> dict[str, Any]:
    """A ClusterServingRuntime, or a ServingRuntime when a namespace is given."""
    spec = {"supportedModelFormats": [{"modelFormat": FORMAT, "modelArchitecture": architecture, "autoSelect": True}]}
    return _obj("ServingRuntime" if namespace else "ClusterServingRuntime", name, namespace, spec)


def isvc(name: str, namespace: str, *, model_name: str) -> dict[str, Any]:
    return _obj("InferenceService", name, namespace, {"model": {"name": model_name, "kind": "ClusterBaseModel"}})


def broken_model(name: str) -> dict[str, Any]:
    return _obj("ClusterBaseModel", name, None, {"modelFormat": "safetensors"})


def one_of_each() -> list[dict[str, Any]]:
    return [
        model("llama"),
        model("tuned", "team-a"),
        model("tuned", "team-b", architecture="MistralForCausalLM"),
        runtime("vllm"),
        runtime("team-rt", "team-a"),
        isvc("chat", "team-a", model_name="llama"),
    ]
