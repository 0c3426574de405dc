"""Which models a runtime could match at all: the necessary part of OME's entry check, and an
index of models by it, so that a runtime meets only the models one of its entries could pass
(spec quirk Q9)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .types import Entry, FormatRef, Model, ObjectKey, Runtime


def entry_could_match(entry: Entry, model: Model) -> bool:
    """The necessary part of OME's entry check (spec 2.1, Q9): equal format name, architecture,
    quantization and framework name (absent equals only absent). Versions, pipeline and size
    are left to the real check."""
    if entry.format is None or entry.format.name != model.format.name:
        return False
    if entry.architecture != model.architecture or entry.quantization != model.quantization:
        return False
    if (entry.framework is None) != (model.framework is None):
        return False
    return entry.framework is None or model.framework is None or entry.framework.name == model.framework.name


def runtime_could_match(runtime: Runtime, model: Model) -> bool:
    return any(entry_could_match(entry, model) for entry in runtime.entries)


def _match_key(
    format_name: str, architecture: str | None, quantization: str | None, framework: FormatRef | None
) -> tuple[object, ...]:
    return (format_name, architecture, quantization, None if framework is None else (framework.name,))


class CandidateIndex:
    """Models indexed by what `entry_could_match` compares, so that a runtime meets only the
    models one of its entries could pass (the grid's own trick, spec quirk Q9)."""

    def __init__(self, models: Mapping[ObjectKey, Model]) -> None:
        self._index: dict[tuple[object, ...], list[ObjectKey]] = {}
        for key, model in models.items():
            match_key = _match_key(model.format.name, model.architecture, model.quantization, model.framework)
            self._index.setdefault(match_key, []).append(key)

    def candidates(self, runtime: Runtime, entries: Iterable[Entry] | None = None) -> list[ObjectKey]:
        """Sorted keys of the models in the runtime's scope that an entry could match."""
        found: set[ObjectKey] = set()
        for entry in runtime.entries if entries is None else entries:
            if entry.format is not None:
                match_key = _match_key(entry.format.name, entry.architecture, entry.quantization, entry.framework)
                found.update(self._index.get(match_key, ()))
        return sorted(key for key in found if in_scope(runtime.key, key))


def in_scope(runtime_key: ObjectKey, model_key: ObjectKey) -> bool:
    """Whether a runtime can appear in any row of the model."""
    if runtime_key[0] == "ClusterServingRuntime" or model_key[0] == "ClusterBaseModel":
        return True
    return runtime_key[1] == model_key[1]
