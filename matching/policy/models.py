"""A policy scope's selector of models by what they are: the facts OME's model agent records
(ome-docs concepts/models/base-models.md: modelFormat, modelFramework, modelArchitecture,
modelCapabilities, modelParameterSize, diffusionPipeline.className, storage.storageUri), so that
"every diffusion model" is `models: {formats: [diffusers]}` and covers models added later."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from ..sizes import parse_size
from ..types import Model

FIELDS = ("formats", "architectures", "frameworks", "pipelineClasses", "capabilities", "storageSchemes")
"""The glob-list fields of `scope.models`, in the order docs/policies.md lists them."""


def _values(model: Model, field: str) -> tuple[str, ...]:
    """The model's values for one selector field (none when it records none)."""
    if field == "formats":
        return (model.format.name,)
    if field == "frameworks":
        return () if model.framework is None else (model.framework.name,)
    if field == "architectures":
        return () if model.architecture is None else (model.architecture,)
    if field == "pipelineClasses":
        return () if model.pipeline is None or model.pipeline.class_name is None else (model.pipeline.class_name,)
    if field == "capabilities":
        return model.capabilities
    scheme, separator, _rest = (model.storage_uri or "").partition("://")
    return (scheme,) if separator else ()


@dataclass(frozen=True, slots=True)
class ModelSelector:
    """Each field set narrows: a model matches when one of its values matches one of the field's
    globs (case-sensitive), and its size is within `size_min`..`size_max` (inclusive, parsed as
    OME parses sizes; a model that records no size is outside any size bound)."""

    globs: tuple[tuple[str, tuple[str, ...]], ...] = ()
    size_min: str | None = None
    size_max: str | None = None

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> ModelSelector:
        size = raw.get("size") or {}
        globs = tuple((field, tuple(raw[field])) for field in FIELDS if field in raw)
        return cls(globs, size.get("min"), size.get("max"))

    def matches(self, model: Model | None) -> bool:
        if model is None:
            return False
        for field, patterns in self.globs:
            if not any(fnmatchcase(value, glob) for value in _values(model, field) for glob in patterns):
                return False
        if self.size_min is None and self.size_max is None:
            return True
        if model.size is None:
            return False
        size = parse_size(model.size)
        low = self.size_min is None or size >= parse_size(self.size_min)
        return low and (self.size_max is None or size <= parse_size(self.size_max))
