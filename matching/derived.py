"""A new runtime for a model that no runtime accepts as it is: derived from the closest one
(its containers and settings), with one entry for the model's recorded facts, and its
model-specific container arguments rewritten for the model (dedicated.py): the served name
becomes the model's own, a literal model path `$(MODEL_PATH)`; the settings that cannot be
derived from the model's facts (a chat template, a parser) are named, for a person to review."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .behaviour import DEFAULT_BEHAVIOUR, BehaviourInput, as_behaviour
from .dedicated import rewrite_for
from .errors import ManifestError
from .facts import entry_serving, serves_format
from .fixes import RUNTIME, Fix
from .nearmiss import near_miss
from .parse import parse_model, parse_runtime


def derived_runtime(
    model: Mapping[str, Any], runtime: Mapping[str, Any], name: str, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR
) -> Fix | None:
    """A new runtime named `name`, derived from `runtime` (its containers and settings) with one
    entry that accepts the model as it is, a size range of exactly the model's size when
    it records one, and its model-specific arguments rewritten for the model; None when
    OME would still not auto-select it for the model."""
    parsed_model, profile = parse_model(model), as_behaviour(behaviour)
    source = parse_runtime(runtime)
    rewrite = rewrite_for(runtime.get("spec") or {}, parsed_model)
    spec = rewrite.spec
    entries = spec.get("supportedModelFormats")
    closest = near_miss(parsed_model, source, profile)
    if closest is None or closest.entry is None or not serves_format(parsed_model, source.entries[closest.entry]):
        return None
    like = entries[closest.entry] if isinstance(entries, list) else None
    spec["supportedModelFormats"] = [entry_serving(parsed_model, model, like if isinstance(like, Mapping) else None)]
    spec.pop("disabled", None)
    spec.pop("modelSizeRange", None)
    if parsed_model.size is not None:  # it serves this model only: others of its architecture stay off
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
    texts = [f"runtime: a new {source.kind} {name}, derived from {source.name}, that accepts this model as it is"]
    texts += [f"runtime: {at}: {old} becomes {new}" for at, old, new in rewrite.changed]
    review = tuple(argument.describe() for argument in rewrite.unchanged)
    texts += [f"review: {item} is {source.name}'s setting, kept as it is" for item in review]
    return Fix(
        RUNTIME, created.key, (), tuple(texts), (), created=(manifest,), arguments=rewrite.changed, review=review
    )
