"""A lint fix: the change to one object that would remove a finding's root cause, to be
evaluated by the what-if before anyone applies it. Pure data over the objects' manifests."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import matching
from matching import ObjectKey, key_dict


@dataclass(frozen=True)
class Fix:
    """`target`: the runtime whose what-if evaluates the fix. `patch`: a JSON merge patch of it;
    `entries`: fields to set on entries of its spec.supportedModelFormats by index (a merge
    patch would replace the whole list), where None removes the field. `others`: merge patches
    of other objects (models) the fix changes instead of, or as well as, the runtime."""

    target: ObjectKey
    summary: str
    patch: dict[str, Any] = field(default_factory=dict)
    entries: dict[int, dict[str, Any]] = field(default_factory=dict)
    others: dict[ObjectKey, dict[str, Any]] = field(default_factory=dict)

    @property
    def changed(self) -> list[ObjectKey]:
        """The objects the fix changes, the runtime first when it is one of them."""
        return ([self.target] if self.patch or self.entries else []) + list(self.others)

    @property
    def size(self) -> int:
        """How many values it sets: the leaves of its merge patches and the entries' fields."""
        return (
            _leaves(self.patch)
            + sum(len(values) for values in self.entries.values())
            + sum(_leaves(patch) for patch in self.others.values())
        )

    def apply_to(self, key: ObjectKey, obj: Mapping[str, Any]) -> dict[str, Any]:
        """`obj` (the object `key`) with the fix applied: a copy."""
        if key == self.target:
            return self.apply(obj)
        return dict(matching.merge_patch(obj, self.others.get(key, {})))

    def apply(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """The object with the fix applied (a copy)."""
        result = matching.merge_patch(obj, self.patch) if self.patch else copy.deepcopy(dict(obj))
        formats = result.get("spec", {}).get("supportedModelFormats")
        for index, values in self.entries.items():
            if isinstance(formats, list) and index < len(formats) and isinstance(formats[index], dict):
                for path, value in values.items():
                    _set(formats[index], path.split("."), value)
        return result

    def to_dict(self) -> dict[str, object]:
        return {
            "target": key_dict(self.target),
            "summary": self.summary,
            "merge_patch": self.patch or None,
            "entries": {str(index): values for index, values in self.entries.items()} or None,
            "others": [{"object": key_dict(key), "merge_patch": patch} for key, patch in self.others.items()] or None,
        }


def _leaves(patch: Mapping[str, Any]) -> int:
    return sum(_leaves(value) if isinstance(value, Mapping) and value else 1 for value in patch.values())


def _set(obj: dict[str, Any], path: list[str], value: Any) -> None:
    for name in path[:-1]:
        child = obj.get(name)
        if not isinstance(child, dict):
            child = obj[name] = {}
        obj = child
    if value is None:
        obj.pop(path[-1], None)
    else:
        obj[path[-1]] = value
