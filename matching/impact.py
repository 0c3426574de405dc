"""What a change of a runtime or model does, in a few sentences: the InferenceServices it moves
to another runtime (or leaves without one) on their next reconcile, and the models it leaves
without a runtime or gives one. The one wording of the admission webhook's warnings
(whatif.admission, docs/admission.md) and of the assistant's `impact_of_edit` answer
(matching.assistant, docs/mcp.md)."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from .keys import key_text
from .types import ObjectKey

NAMES_SHOWN = 3


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _names(keys: Collection[ObjectKey]) -> str:
    shown = sorted(key_text(key) for key in keys)
    more = len(shown) - NAMES_SHOWN
    return ", ".join(shown[:NAMES_SHOWN]) + (f" and {more} more" if more > 0 else "")


def impact_sentences(
    moved: Mapping[str | None, int], lost: Collection[ObjectKey], gained: Collection[ObjectKey]
) -> list[str]:
    """`moved`: how many auto-selected InferenceServices go to each runtime (by name; None:
    to none); `lost`, `gained`: the models that lose their only runtime, or gain one."""
    sentences = []
    for target, count in sorted(moved.items(), key=lambda item: str(item[0])):
        services = _plural(count, "InferenceService")
        if target is None:
            sentences.append(f"leaves {services} without a runtime on their next reconcile")
        else:
            sentences.append(f"moves {services} to {target} on their next reconcile")
    if lost:
        verb = "loses its" if len(lost) == 1 else "lose their"
        sentences.append(f"{_plural(len(lost), 'model')} {verb} only runtime: {_names(lost)}")
    if gained:
        verb = "gains" if len(gained) == 1 else "gain"
        sentences.append(f"{_plural(len(gained), 'model')} {verb} a runtime: {_names(gained)}")
    return sentences
