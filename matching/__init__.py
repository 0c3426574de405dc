"""OME's runtime selection, ported faithfully: a pure library (standard library only).

The public functions are a contract that other tools call; keep names and return shapes.
Verdicts follow OME at commit 17b77edad23bae262e0c9adb7f12039397a5d33d (spec sections 1-9),
plus the newer behaviour that spec section 10 recommends where it only concerns inputs that
older OME could not evaluate (OME_BEHAVIOUR says which).
"""

from __future__ import annotations

from . import reasons
from .candidates import CandidateIndex, entry_could_match, in_scope, runtime_could_match
from .crd import DEFAULT_NAMESPACE, as_applied, with_crd_defaults
from .diff import diff
from .diff_results import CONDITIONS as DIFF_CONDITIONS
from .diff_results import Diff, DiffCell, DiffIsvc, DiffRow
from .errors import ManifestError, ModelIndexError
from .files import read_documents
from .grid import Grid, grid
from .isvc import ADVISORY, BLOCKED, NAMED, SELECTED, IsvcOutcome, evaluate_isvc, invalid_isvc, isvc_still_matches
from .keys import KeyReference, key_dict, key_path, key_text, parse_key_reference
from .parse import parse_isvc, parse_model, parse_object, parse_runtime
from .patches import merge_patch, pipeline_patch
from .pipeline import pipeline_from_model_index
from .report import Section, Verdict, json_report, parse_conditions, verdict
from .reporting import EXIT_BAD_INPUT, add_report_options, emit, fail_on_of, render
from .reporting import FORMATS as REPORT_FORMATS
from .results import CheckOutcome, CheckReport, EntryReport, Match, PatchPlan, Selection
from .rules import SHARDED, entry_passes
from .score import entry_score, model_size_value, score_breakdown, size_score
from .select import check, model_error, score, select, validate
from .sizes import go_parse_float
from .tree import Objects, TreeError, is_ome_object, isvc_pinned, objects_of, read_objects, read_tree
from .types import NAMED_COMPONENTS, Component, Entry, FormatRef, InferenceService, Model, ObjectKey, Pipeline, Runtime
from .versions import operator_problem, version_problem

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
    "ADVISORY",
    "BLOCKED",
    "DEFAULT_NAMESPACE",
    "DIFF_CONDITIONS",
    "EXIT_BAD_INPUT",
    "NAMED",
    "NAMED_COMPONENTS",
    "OME_BEHAVIOUR",
    "REPORT_FORMATS",
    "SELECTED",
    "SHARDED",
    "CandidateIndex",
    "CheckOutcome",
    "CheckReport",
    "Component",
    "Diff",
    "DiffCell",
    "DiffIsvc",
    "DiffRow",
    "Entry",
    "EntryReport",
    "FormatRef",
    "Grid",
    "InferenceService",
    "IsvcOutcome",
    "KeyReference",
    "ManifestError",
    "Match",
    "Model",
    "ModelIndexError",
    "ObjectKey",
    "Objects",
    "PatchPlan",
    "Pipeline",
    "Runtime",
    "Section",
    "Selection",
    "TreeError",
    "Verdict",
    "add_report_options",
    "as_applied",
    "check",
    "diff",
    "emit",
    "entry_could_match",
    "entry_passes",
    "entry_score",
    "evaluate_isvc",
    "fail_on_of",
    "go_parse_float",
    "grid",
    "in_scope",
    "invalid_isvc",
    "is_ome_object",
    "isvc_pinned",
    "isvc_still_matches",
    "json_report",
    "key_dict",
    "key_path",
    "key_text",
    "merge_patch",
    "model_error",
    "model_size_value",
    "objects_of",
    "operator_problem",
    "parse_conditions",
    "parse_isvc",
    "parse_key_reference",
    "parse_model",
    "parse_object",
    "parse_runtime",
    "pipeline_from_model_index",
    "pipeline_patch",
    "read_documents",
    "read_objects",
    "read_tree",
    "reasons",
    "render",
    "runtime_could_match",
    "score",
    "score_breakdown",
    "select",
    "size_score",
    "validate",
    "verdict",
    "version_problem",
    "with_crd_defaults",
]
