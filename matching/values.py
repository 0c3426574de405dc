"""Values the API server accepts (OME's CRDs type them as plain strings) but OME cannot match:
a version that does not parse, an operator OME does not know, a size that reads as 0. Each
is named by its path in the object, for a what-if to warn about and evaluate anyway."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .advice import size_is_unparsable
from .versions import operator_problem, version_problem

_SIZE_TEXT = "OME reads only a number with an upper-case T, B or M suffix, and counts this size as 0"


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _size(path: str, value: object) -> list[tuple[str, str]]:
    if isinstance(value, str) and size_is_unparsable(value):
        return [(path, f"{value!r} does not parse: {_SIZE_TEXT}")]
    return []


def _reference(path: str, value: object, *, operator: bool) -> list[tuple[str, str]]:
    reference = _mapping(value)
    found = []
    version = reference.get("version")
    if isinstance(version, str) and (problem := version_problem(version)):
        found.append((f"{path}.version", f"{version!r} does not parse ({problem}), so OME matches it with nothing"))
    if operator and isinstance(reference.get("operator"), str) and (problem := operator_problem(reference["operator"])):
        found.append((f"{path}.operator", problem))
    return found


def unmatchable_values(obj: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """(path, problem) for each value of a model or runtime that OME accepts but cannot match."""
    spec = _mapping(obj.get("spec"))
    found = []
    if obj.get("kind") in ("BaseModel", "ClusterBaseModel"):
        found += _size("spec.modelParameterSize", spec.get("modelParameterSize"))
        for field in ("modelFormat", "modelFramework"):
            found += _reference(f"spec.{field}", spec.get(field), operator=False)
        return tuple(found)
    size_range = _mapping(spec.get("modelSizeRange"))
    for bound in ("min", "max"):
        found += _size(f"spec.modelSizeRange.{bound}", size_range.get(bound))
    entries = spec.get("supportedModelFormats")
    for index, entry in enumerate(entries if isinstance(entries, list) else ()):
        for field in ("modelFormat", "modelFramework"):
            found += _reference(
                f"spec.supportedModelFormats[{index}].{field}", _mapping(entry).get(field), operator=True
            )
    return tuple(found)
