"""A new runtime for a model that no runtime accepts as it is: derived from the closest one
(its containers and settings), with one entry for the model's recorded facts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .behaviour import DEFAULT_BEHAVIOUR, BehaviourInput, as_behaviour
from .errors import ManifestError
from .facts import entry_serving, serves_format
from .fixes import RUNTIME, Fix
from .nearmiss import near_miss
from .parse import parse_model, parse_runtime


def derived_runtime(
    model: Mapping[str, Any], runtime: Mapping[str, Any], name: str, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR
) -> Fix | None:
    """A new runtime named `name`, derived from `runtime` (its containers and settings) with one
    entry that accepts the model as it is and a size range of exactly the model's size when
    the source has one; None when OME would still not auto-select it for the model."""
    parsed_model, profile = parse_model(model), as_behaviour(behaviour)
    source = parse_runtime(runtime)
    spec = dict(runtime.get("spec") or {})
    entries = spec.get("supportedModelFormats")
    closest = near_miss(parsed_model, source, profile)
    if closest is None or closest.entry is None or not serves_format(parsed_model, source.entries[closest.entry]):
        return None
    like = entries[closest.entry] if isinstance(entries, list) else None
    spec["supportedModelFormats"] = [entry_serving(parsed_model, model, like if isinstance(like, Mapping) else None)]
    spec.pop("disabled", None)
    spec.pop("modelSizeRange", None)
    if source.size_range is not None and parsed_model.size is not None:
        spec["modelSizeRange"] = {"min": parsed_model.size, "max": parsed_model.size}
    metadata: dict[str, Any] = {"name": name}
    if source.namespace:
        metadata["namespace"] = source.namespace
    manifest = {
        "apiVersion": runtime.get("apiVersion", "ome.io/v1beta1"),
        "kind": source.kind,
        "metadata": metadata,
        "spec": spec,
    }
    try:
        created = parse_runtime(manifest)
    except ManifestError:
        return None
    if near_miss(parsed_model, created, profile) is not None:
        return None
    text = f"runtime: a new {source.kind} {name}, derived from {source.name}, that accepts this model as it is"
    return Fix(RUNTIME, created.key, (), (text,), (), created=(manifest,))
