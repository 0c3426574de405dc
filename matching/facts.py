"""What a model's recorded fields say about its weights, and which runtime entries could serve
them without a change to the model.

A model's architecture, format and framework names, parameter size, quantization and pipeline
components describe its weights. OME's model agent records them from the model's own files
(spec 6.1) unless it cannot: a pvc://, vendor:// or object-store model, or one annotated
`ome.oracle.com/skip-config-parsing`. Fixes may fill a fact that is absent, never change one
that is recorded (fixes.py); where no runtime accepts a recorded fact, the answer is on the
runtime side (a new entry, a new runtime).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .types import Entry, FormatRef, Model, Runtime

SKIP_CONFIG_PARSING = "ome.oracle.com/skip-config-parsing"
_RECORDED_SCHEMES = ("hf://", "oci://", "local://")
"""The storage kinds whose files OME's model agent parses (spec 6.1)."""


def records_facts(model_obj: Mapping[str, Any]) -> bool:
    """Whether OME's model agent records this model's facts from its files: an absent fact of
    such a model was looked for and not found (no quantization, no pipeline), not unknown."""
    metadata, spec = model_obj.get("metadata"), model_obj.get("spec")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    if isinstance(annotations, Mapping) and str(annotations.get(SKIP_CONFIG_PARSING, "")).lower() == "true":
        return False
    storage = spec.get("storage") if isinstance(spec, Mapping) else None
    uri = storage.get("storageUri") if isinstance(storage, Mapping) else None
    return isinstance(uri, str) and uri.startswith(_RECORDED_SCHEMES)


def _ref(ref: FormatRef) -> dict[str, object]:
    out: dict[str, object] = {"name": ref.name}
    if ref.version is not None:
        out["version"] = ref.version
    return out


def entry_serving(model: Model, model_obj: Mapping[str, Any], like: Mapping[str, Any] | None) -> dict[str, Any]:
    """A `supportedModelFormats` entry that accepts exactly the model's facts, copied from
    `like` (an existing entry, for its priority and cache providers), with autoSelect on."""
    entry = {key: value for key, value in (like or {}).items() if key in ("priority", "modelCacheProviders")}
    entry["modelFormat"] = _ref(model.format)
    if model.framework is not None:
        entry["modelFramework"] = _ref(model.framework)
    if model.architecture is not None:
        entry["modelArchitecture"] = model.architecture
    if model.quantization is not None:
        entry["quantization"] = model.quantization
    spec = model_obj.get("spec")
    pipeline = spec.get("diffusionPipeline") if isinstance(spec, Mapping) else None
    if pipeline is not None:
        entry["diffusionPipeline"] = pipeline
    entry["autoSelect"] = True
    return entry


def _accepts(entry: Entry, model: Model) -> dict[str, bool]:
    """Which of the model's facts the entry accepts as recorded (versions aside: a runtime
    can declare support for another version)."""
    framework = model.framework
    return {
        "architecture": entry.architecture == model.architecture,
        "format": entry.format is not None and entry.format.name == model.format.name,
        "framework": (entry.framework is None and framework is None)
        or (entry.framework is not None and framework is not None and entry.framework.name == framework.name),
        "quantization": entry.quantization == model.quantization,
    }


def _fact_text(model: Model, fact: str) -> str:
    if fact == "architecture":
        return model.architecture or "a model without an architecture"
    if fact == "format":
        return f"the {model.format.name or 'empty'} format"
    if fact == "framework":
        return "a model without a framework" if model.framework is None else f"the {model.framework.name} framework"
    return f"{model.quantization} quantization" if model.quantization else "an unquantized model"


def unserved_fact(model: Model, runtimes: Iterable[Runtime]) -> str | None:
    """The recorded fact of the model that no entry of the runtimes accepts, in words
    ("GemmaForCausalLM"); None when some entry accepts all of them. When every fact is accepted
    by some entry but never together, the first fact that the fewest entries accept."""
    counts = {"architecture": 0, "format": 0, "framework": 0, "quantization": 0}
    for runtime in runtimes:
        for entry in runtime.entries:
            accepted = _accepts(entry, model)
            if all(accepted.values()):
                return None
            for fact, ok in accepted.items():
                counts[fact] += ok
    fact = min(counts, key=lambda name: counts[name])
    return _fact_text(model, fact)


def serves_format(model: Model, entry: Entry | None) -> bool:
    """Whether the entry serves the model's format: another format is another engine."""
    return entry is not None and entry.format is not None and entry.format.name == model.format.name
