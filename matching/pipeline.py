"""The diffusion pipeline check (section 2.5) and what OME records from model_index.json (6.3)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from . import reasons
from .errors import ModelIndexError
from .types import NAMED_COMPONENTS, Component, Pipeline


def _component_problem(name: str, model: Component, required: Component) -> str | None:
    if required.library and required.library != model.library:
        return reasons.component_library_mismatch(name, model.library, required.library)
    if required.type and required.type != model.type:
        return reasons.component_type_mismatch(name, model.type, required.type)
    return None


@lru_cache(maxsize=65536)
def pipeline_mismatch(model: Pipeline | None, required: Pipeline | None) -> str | None:
    """OME's first pipeline problem of a model against an entry, or None when it passes.

    Additional components are checked in name order; OME walks a Go map, so which of several
    failing ones it names is random (quirk Q6).
    """
    if required is None:
        return None
    if model is None:
        return reasons.PIPELINE_REQUIRED
    if required.class_name is not None and model.class_name != required.class_name:
        return reasons.pipeline_class_mismatch(model.class_name, required.class_name)
    for name, needed in required.components:
        present = model.component(name)
        if present is None:
            return reasons.component_missing(name)
        problem = _component_problem(name, present, needed)
        if problem:
            return problem
    if required.additional and not model.additional:
        return reasons.ADDITIONAL_COMPONENTS_MISSING
    for name, needed in required.additional:
        present = model.additional_component(name)
        if present is None:
            return reasons.additional_component_missing(name)
        problem = _component_problem(name, present, needed)
        if problem:
            return problem
    return None


_CLASS_KEYS = ("_class_name", "class_name", "className")
_VERSION_KEYS = ("_diffusers_version", "diffusers_version")
_NAMED_KEYS = {
    "scheduler": "scheduler",
    "text_encoder": "textEncoder",
    "tokenizer": "tokenizer",
    "transformer": "transformer",
    "unet": "transformer",
    "vae": "vae",
}


def _first_string(data: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return ""


def _read_component(value: object) -> Component | None:
    if isinstance(value, list):
        if not value or not all(item is None or isinstance(item, str) for item in value):
            return None
        items = [item or "" for item in value]
        if len(items) == 1:
            return Component(type=items[0])
        return Component(library=items[0], type=items[1])
    if isinstance(value, Mapping):
        type_ = _first_string(value, (*_CLASS_KEYS, "type"))
        library = _first_string(value, ("_library", "library"))
        return Component(library=library, type=type_) if type_ or library else None
    return None


def diffusers_version(data: Mapping[str, Any]) -> str:
    """The `_diffusers_version` OME records as format and framework version ("" when missing)."""
    return _first_string(data, _VERSION_KEYS)


def model_index_problem(data: Mapping[str, Any]) -> str | None:
    """Why OME's model agent reads nothing from this model_index.json before parsing its
    pipeline (section 6.2: the file is loaded by `model_type`, else the pipeline class name),
    or None when it gets that far."""
    if not isinstance(data, Mapping):
        return "model_index.json must hold a JSON object"
    if _first_string(data, ("model_type", *_CLASS_KEYS)):
        return None
    return (
        "model_index.json has no _class_name (nor class_name, className or model_type): OME's model agent "
        'stops with "model_type or _class_name field is missing or empty in config file" and records nothing'
    )


def pipeline_from_model_index(data: Mapping[str, Any]) -> dict[str, object]:
    """The `diffusionPipeline` OME records from a parsed model_index.json, camelCase keys,
    absent fields left out.

    `unet` becomes `transformer`; when a file has both, `transformer` wins (OME picks one at
    random, quirk Q7). Keys OME does not name go under `additionalComponents`.

    Raises ModelIndexError where OME records nothing.

    >>> pipeline_from_model_index({"_class_name": "P", "unet": ["diffusers", "U"]})
    {'className': 'P', 'transformer': {'library': 'diffusers', 'type': 'U'}}
    """
    if not isinstance(data, Mapping):
        raise ModelIndexError("model_index.json must hold a JSON object")
    named: dict[str, Component] = {}
    additional: dict[str, Component] = {}
    for key, value in data.items():
        if not isinstance(key, str) or key.startswith("_"):
            continue
        component = _read_component(value)
        if component is None:
            continue
        field = _NAMED_KEYS.get(key.lower())
        if field is None:
            additional[key] = component
        elif field not in named or key.lower() == "transformer":
            named[field] = component
    class_name = _first_string(data, _CLASS_KEYS)
    if not class_name and not named and not additional:
        raise ModelIndexError("model_index.json did not contain diffusion pipeline metadata")
    pipeline = Pipeline(
        class_name=class_name or None,
        components=tuple((name, named[name]) for name in NAMED_COMPONENTS if name in named),
        additional=tuple(sorted(additional.items())),
    )
    return pipeline.to_dict()
