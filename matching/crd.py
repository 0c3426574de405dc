"""The defaults OME's CRDs apply on a live cluster, for objects read from manifest files.

On a cluster every present `modelFormat` and `modelFramework` object carries `operator: Equal`
and `weight: 1`, which changes scores (quirk Q21); InferenceService references default their
kinds. Applying these to manifests makes a folder and a cluster give the same verdicts.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .types import CLUSTER_KINDS, ISVC_KIND, MODEL_KINDS, RUNTIME_KINDS

CRD_DEFAULT_WEIGHT = 1
"""The `weight` default of `modelFormat` and `modelFramework` in OME's CRDs
(config/crd/.../ome.io_clusterservingruntimes.yaml and ome.io_servingruntimes.yaml: `default: 1`)."""
FORMAT_DEFAULTS: dict[str, object] = {"operator": "Equal", "weight": CRD_DEFAULT_WEIGHT}


def _default_format(holder: Any) -> None:
    if not isinstance(holder, dict):
        return
    for field in ("modelFormat", "modelFramework"):
        value = holder.get(field)
        if isinstance(value, dict):
            for key, default in FORMAT_DEFAULTS.items():
                if value.get(key) is None:
                    value[key] = default


def _default_reference(spec: dict[str, Any], field: str, kind: str) -> None:
    value = spec.get(field)
    if isinstance(value, dict):
        if value.get("kind") is None:
            value["kind"] = kind
        if value.get("apiGroup") is None:
            value["apiGroup"] = "ome.io"


def with_crd_defaults(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `obj` with the API server's CRD defaults filled in; malformed parts are left
    as they are for the parser to report."""
    result: dict[str, Any] = copy.deepcopy(dict(obj))
    spec = result.get("spec")
    if not isinstance(spec, dict):
        return result
    kind = result.get("kind")
    if kind in MODEL_KINDS:
        _default_format(spec)
    elif kind in RUNTIME_KINDS and isinstance(spec.get("supportedModelFormats"), list):
        for entry in spec["supportedModelFormats"]:
            _default_format(entry)
    elif kind == ISVC_KIND:
        _default_reference(spec, "model", "ClusterBaseModel")
        _default_reference(spec, "runtime", "ClusterServingRuntime")
    return result


DEFAULT_NAMESPACE = "default"
"""Where `kubectl apply` puts a namespaced object whose manifest names no namespace (the
context's namespace, "default" unless configured otherwise)."""


def as_applied(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A manifest as the API server stores it: the CRD defaults, and a namespaced object
    without a namespace in DEFAULT_NAMESPACE. The one normalisation of manifests read from
    files, for `load_manifests`, the what-if and `python -m matching`."""
    result = with_crd_defaults(obj)
    metadata = result.get("metadata")
    if isinstance(metadata, dict) and result.get("kind") not in CLUSTER_KINDS and not metadata.get("namespace"):
        metadata["namespace"] = DEFAULT_NAMESPACE
    return result
