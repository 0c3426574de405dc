"""OME's runtime selection, ported faithfully: a pure library (standard library only).

The public functions are a contract that other tools call; keep names and return shapes.
Verdicts follow OME at commit 17b77edad23bae262e0c9adb7f12039397a5d33d (spec sections 1-9),
plus the newer behaviour that spec section 10 recommends where it only concerns inputs that
older OME could not evaluate (OME_BEHAVIOUR says which).
"""

from __future__ import annotations

from .candidates import CandidateIndex, entry_could_match, in_scope, runtime_could_match
from .crd import with_crd_defaults
from .errors import ManifestError, ModelIndexError
from .grid import Grid, grid
from .keys import key_dict, key_text
from .parse import parse_isvc, parse_model, parse_object, parse_runtime
from .patches import merge_patch, pipeline_patch
from .pipeline import pipeline_from_model_index
from .results import CheckOutcome, CheckReport, EntryReport, Match, PatchPlan, Selection
from .select import check, score, select, validate
from .types import Component, Entry, FormatRef, InferenceService, Model, Pipeline, Runtime

OME_BEHAVIOUR = {
    "commit": "17b77edad23bae262e0c9adb7f12039397a5d33d",
    "date": "2026-05-06",
    "summary": (
        "OME runtime selection at commit 17b77eda (v1.2.x), plus from newer OME (v1.3): "
        "one-bound modelSizeRange (U1), deployment-mode check (U2), Sharded models need a "
        "model cache provider (U3)"
    ),
}

__all__ = [
    "OME_BEHAVIOUR",
    "CandidateIndex",
    "CheckOutcome",
    "CheckReport",
    "Component",
    "Entry",
    "EntryReport",
    "FormatRef",
    "Grid",
    "InferenceService",
    "ManifestError",
    "Match",
    "Model",
    "ModelIndexError",
    "PatchPlan",
    "Pipeline",
    "Runtime",
    "Selection",
    "check",
    "entry_could_match",
    "grid",
    "in_scope",
    "key_dict",
    "key_text",
    "merge_patch",
    "parse_isvc",
    "parse_model",
    "parse_object",
    "parse_runtime",
    "pipeline_from_model_index",
    "pipeline_patch",
    "runtime_could_match",
    "score",
    "select",
    "validate",
    "with_crd_defaults",
]
