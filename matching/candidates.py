"""Which models a runtime could match at all: the necessary part of OME's entry check, and an
index of models by it, so that a runtime meets only the models one of its entries could pass
(spec quirk Q9)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .types import CLUSTER_BASE_MODEL, CLUSTER_SERVING_RUNTIME, Entry, FormatRef, Model, ObjectKey, Runtime

MatchKey = tuple[object, ...]
"""What an entry and a model must share for the entry to pass it: format name, architecture,
quantization and framework name (absent equals only absent, quirk Q9)."""


def _match_key(
    format_name: str, architecture: str | None, quantization: str | None, framework: FormatRef | None
) -> MatchKey:
    return (format_name, architecture, quantization, None if framework is None else (framework.name,))


def entry_match_key(entry: Entry) -> MatchKey | None:
    """None for an entry without modelFormat: it passes no model."""
    if entry.format is None:
        return None
    return _match_key(entry.format.name, entry.architecture, entry.quantization, entry.framework)


def model_match_key(model: Model) -> MatchKey:
    return _match_key(model.format.name, model.architecture, model.quantization, model.framework)


def entry_could_match(entry: Entry, model: Model) -> bool:
    """The necessary part of OME's entry check (spec 2.1, Q9): equal match keys. Versions,
    pipeline and size are left to the real check."""
    key = entry_match_key(entry)
    return key is not None and key == model_match_key(model)


def runtime_could_match(runtime: Runtime, model: Model) -> bool:
    return any(entry_could_match(entry, model) for entry in runtime.entries)


class CandidateIndex:
    """Models indexed by what `entry_could_match` compares, so that a runtime meets only the
    models one of its entries could pass (the grid's own trick, spec quirk Q9)."""

    def __init__(self, models: Mapping[ObjectKey, Model]) -> None:
        self._index: dict[MatchKey, list[ObjectKey]] = {}
        for key, model in models.items():
            self._index.setdefault(model_match_key(model), []).append(key)

    def candidates(self, runtime: Runtime, entries: Iterable[Entry] | None = None) -> list[ObjectKey]:
        """Sorted keys of the models in the runtime's scope that an entry could match."""
        found: set[ObjectKey] = set()
        for entry in runtime.entries if entries is None else entries:
            match_key = entry_match_key(entry)
            if match_key is not None:
                found.update(self._index.get(match_key, ()))
        return sorted(key for key in found if in_scope(runtime.key, key))


def in_scope(runtime_key: ObjectKey, model_key: ObjectKey) -> bool:
    """Whether a runtime can appear in any row of the model."""
    if runtime_key[0] == CLUSTER_SERVING_RUNTIME or model_key[0] == CLUSTER_BASE_MODEL:
        return True
    return runtime_key[1] == model_key[1]
