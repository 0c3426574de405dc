"""OME's quirks that lint messages cite by code (Q1, Q16, ...), in words: what each means for
a user (from the selection spec's list of quirks, /work/shared/spec §9; our own wording)."""

from __future__ import annotations

import re

QUIRKS = {
    "Q1": "OME ranks every auto-selectable ServingRuntime of the namespace before any ClusterServingRuntime, "
    "whatever their scores.",
    "Q2": "A runtime's score is the best score of any of its entries not set to autoSelect: false, "
    "including entries that do not match the model.",
    "Q3": "autoSelect is judged per runtime: one entry with autoSelect: true makes the whole runtime "
    "auto-selectable, even for a model that only another entry matches.",
    "Q9": "A value stated on one side and absent on the other never matches (absent is not a wildcard) for "
    "architecture, quantization, versions and framework.",
    "Q10": "An entry's empty diffusionPipeline: {} still rejects every model without a recorded pipeline.",
    "Q16": "On equal scores, a runtime without modelSizeRange beats every runtime with one; among ranges, the "
    "narrower wins; differences below one parameter leave the order undefined.",
    "Q22": "A modelSizeRange with only min or only max: OME v1.3 treats it as open, OME v1.2 crashes with a "
    "nil-pointer panic on any model with a size.",
    "Q23": "An entry without modelFormat never matches, and OME's reason for it may say only 'unknown mismatch'.",
    "Q27": "When a ClusterServingRuntime and a ServingRuntime share a name, OME's error keeps only the cluster "
    "runtime's reason.",
    "Q30": "OME decides an InferenceService's runtime when the service is created or changed, not when a model "
    "or runtime changes later.",
}

_CODE = re.compile(r"\bQ\d+\b")


def quirks_in(text: str) -> list[tuple[str, str]]:
    """The quirk codes a text cites, each with its explanation, in order of first mention."""
    codes = dict.fromkeys(_CODE.findall(text))
    return [(code, QUIRKS[code]) for code in codes if code in QUIRKS]
