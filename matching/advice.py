"""Warnings that explain values OME accepts but cannot match. They never change a verdict."""

from __future__ import annotations

from .sizes import parse_size
from .types import Entry, FormatRef, Model, Runtime
from .versions import operator_problem, version_problem

_SIZE_SUFFIXES = ("T", "B", "M")


def _version_warnings(kind: str, model_version: str | None, required: FormatRef | None) -> list[str]:
    if required is None or required.version is None or model_version is None:
        return []
    found = []
    problem = version_problem(model_version)
    if problem:
        found.append(
            f"the model's {kind} version {model_version!r} does not parse ({problem}), so OME matches it with nothing"
        )
    problem = version_problem(required.version)
    if problem:
        found.append(
            f"the runtime's {kind} version {required.version!r} does not parse ({problem}), so OME matches it with nothing"
        )
    problem = operator_problem(required.operator)
    if problem:
        found.append(problem)
    return found


def _entry_warnings(model: Model, entry: Entry) -> list[str]:
    found = _version_warnings("format", model.format.version, entry.format)
    if model.framework is not None:
        found += _version_warnings("framework", model.framework.version, entry.framework)
    if entry.pipeline is not None and model.pipeline is not None:
        for name, needed in entry.pipeline.components:
            present = model.pipeline.component(name)
            if needed.library and present is not None and not present.library:
                found.append(
                    f"the model's {name} component records no library, so an entry that requires "
                    f"library {needed.library} cannot match it"
                )
    return found


def size_is_unparsable(text: str) -> bool:
    """Whether OME reads the size as 0 because it does not parse (not because it is zero)."""
    if parse_size(text) != 0:
        return False
    digits = text[:-1] if text.endswith(_SIZE_SUFFIXES) else text
    return digits.strip("0.") != "" or digits == ""


def _size_warnings(model: Model, runtime: Runtime) -> list[str]:
    if model.size is None or runtime.size_range is None:
        return []
    found = []
    if size_is_unparsable(model.size):
        found.append(
            f"the model size {model.size!r} does not parse (OME reads only a number with an upper-case "
            "T, B or M suffix), so OME counts it as 0"
        )
    size_range = runtime.size_range
    if (size_range.min_text is None) != (size_range.max_text is None):
        found.append(
            "the runtime's modelSizeRange sets only one bound: OME since v1.3 treats the other as open, "
            "older OME crashes on it (quirk Q22)"
        )
    return found


def explain_values(model: Model, runtime: Runtime) -> list[str]:
    """Warnings for the model's and runtime's unmatchable values, without duplicates."""
    found = _size_warnings(model, runtime)
    for entry in runtime.entries:
        found += _entry_warnings(model, entry)
    return list(dict.fromkeys(found))
