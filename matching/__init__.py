"""OME's runtime selection, ported faithfully: a pure library (standard library only).

The public functions are a contract that other tools call; keep names and return shapes.
Verdicts follow one OME's behaviour, chosen per call with `behaviour=` (a profile of
`BEHAVIOURS`, its name or a release name of `RELEASES`, default `DEFAULT_BEHAVIOUR`):
"17b77eda" is OME at commit 17b77edad23bae262e0c9adb7f12039397a5d33d (spec sections 1-9);
"v1.3", the default, adds spec section 10's behaviours as OME's documentation describes them
(10.7); proposals (`Behaviour.proposal`) are upstream pull requests and branches. `OME_BEHAVIOUR`
describes the default profile.

`__all__` is the library that other tools call (docs/cli.md lists it); the command line's own
helpers (its options, exit codes and printing) stay in `matching.cli*` and `matching.reporting`.
"""

from __future__ import annotations

from . import reasons
from ._version import __version__
from .admit import Admission, admit_runtime
from .assistant import AssistantError
from .assistant import Tree as AssistantTree
from .behaviour import (
    BEHAVIOURS,
    CHANGES,
    DEFAULT_BEHAVIOUR,
    NEWEST_BEHAVIOUR,
    RELEASED,
    RELEASES,
    Behaviour,
    BehaviourInput,
    as_behaviour,
    changes_between,
)
from .candidates import CandidateIndex, in_scope, runtime_could_match
from .crd import CRD_DEFAULT_WEIGHT, DEFAULT_NAMESPACE, as_applied, with_crd_defaults
from .dedicated import Dedication, dedication, served_name
from .derived import derived_runtime
from .diff import diff
from .diff_results import CONDITIONS as DIFF_CONDITIONS
from .diff_results import Diff, DiffCell, DiffIsvc, DiffRow
from .effects import EFFECTS, GAINS, HARMS, LOSSES, MOVES, RENAMES, harm, is_own, leaves_own, pick_effect
from .errors import ManifestError, ModelIndexError
from .everywhere import EVERYWHERE, fold_everywhere, home_namespace
from .facts import unserved_fact
from .files import TextLimits, TextRefused, count_values, load_text, read_documents
from .fixes import Fix, ObjectPatch, propose_fixes
from .grid import Grid, grid
from .ignored import IGNORED_REASONS, Ignored, ome_ignores
from .impact import impact_sentences
from .isvc import (
    ADVISORY,
    BLOCKED,
    NAMED,
    SELECTED,
    SILENT,
    WAITING,
    IsvcOutcome,
    evaluate_isvc,
    invalid_isvc,
)
from .isvc_config import pvc_namespace_denial
from .isvc_lookup import isvc_still_matches
from .jsonpatch import json_patch
from .keys import KeyReference, key_dict, key_path, key_text, parse_key_reference
from .mcp_tools import add_tools as add_assistant_tools
from .mcp_tools import new_server as assistant_server
from .mcp_tools import read_only as assistant_annotations
from .nearmiss import Miss, NearMiss, near_miss, near_misses
from .parse import parse_isvc, parse_model, parse_object, parse_runtime
from .patches import merge_patch, pipeline_patch
from .pipeline import model_index_problem, pipeline_from_model_index
from .positions import Origin, Positions
from .problems import Problem
from .report import Section, Verdict, json_report, parse_conditions, verdict
from .reporting import FORMATS as REPORT_FORMATS
from .reporting import render
from .results import CheckOutcome, CheckReport, EntryReport, Match, PatchPlan, Selection
from .rules import entry_passes
from .schema import manifest_problems, schema_problems
from .score import ScoreTerms, entry_score, entry_weights, model_size_value, score_breakdown, score_terms, size_score
from .select import check, model_error, score, select, validate
from .sizes import go_parse_float
from .tree import (
    Objects,
    TreeError,
    is_ome_object,
    isvc_pinned,
    objects_of,
    read_checked,
    read_objects,
    read_tree,
)
from .types import NAMED_COMPONENTS, Component, Entry, FormatRef, InferenceService, Model, ObjectKey, Pipeline, Runtime
from .upgrade import Difference, behaviour_diff
from .values import unmatchable_values
from .versions import operator_problem, version_problem

OME_BEHAVIOUR: dict[str, object] = BEHAVIOURS[DEFAULT_BEHAVIOUR].to_dict()
"""The default profile's description (name, commit, date, summary, changes)."""

__all__ = [
    "ADVISORY",
    "BEHAVIOURS",
    "BLOCKED",
    "CHANGES",
    "CRD_DEFAULT_WEIGHT",
    "DEFAULT_BEHAVIOUR",
    "DEFAULT_NAMESPACE",
    "DIFF_CONDITIONS",
    "EFFECTS",
    "EVERYWHERE",
    "GAINS",
    "HARMS",
    "IGNORED_REASONS",
    "LOSSES",
    "MOVES",
    "NAMED",
    "NAMED_COMPONENTS",
    "NEWEST_BEHAVIOUR",
    "OME_BEHAVIOUR",
    "RELEASED",
    "RELEASES",
    "RENAMES",
    "REPORT_FORMATS",
    "SELECTED",
    "SILENT",
    "WAITING",
    "Admission",
    "AssistantError",
    "AssistantTree",
    "Behaviour",
    "BehaviourInput",
    "CandidateIndex",
    "CheckOutcome",
    "CheckReport",
    "Component",
    "Dedication",
    "Diff",
    "DiffCell",
    "DiffIsvc",
    "DiffRow",
    "Difference",
    "Entry",
    "EntryReport",
    "Fix",
    "FormatRef",
    "Grid",
    "Ignored",
    "InferenceService",
    "IsvcOutcome",
    "KeyReference",
    "ManifestError",
    "Match",
    "Miss",
    "Model",
    "ModelIndexError",
    "NearMiss",
    "ObjectKey",
    "ObjectPatch",
    "Objects",
    "Origin",
    "PatchPlan",
    "Pipeline",
    "Positions",
    "Problem",
    "Runtime",
    "ScoreTerms",
    "Section",
    "Selection",
    "TextLimits",
    "TextRefused",
    "TreeError",
    "Verdict",
    "__version__",
    "add_assistant_tools",
    "admit_runtime",
    "as_applied",
    "as_behaviour",
    "assistant_annotations",
    "assistant_server",
    "behaviour_diff",
    "changes_between",
    "check",
    "count_values",
    "dedication",
    "derived_runtime",
    "diff",
    "entry_passes",
    "entry_score",
    "entry_weights",
    "evaluate_isvc",
    "fold_everywhere",
    "go_parse_float",
    "grid",
    "harm",
    "home_namespace",
    "impact_sentences",
    "in_scope",
    "invalid_isvc",
    "is_ome_object",
    "is_own",
    "isvc_pinned",
    "isvc_still_matches",
    "json_patch",
    "json_report",
    "key_dict",
    "key_path",
    "key_text",
    "leaves_own",
    "load_text",
    "manifest_problems",
    "merge_patch",
    "model_error",
    "model_index_problem",
    "model_size_value",
    "near_miss",
    "near_misses",
    "objects_of",
    "ome_ignores",
    "operator_problem",
    "parse_conditions",
    "parse_isvc",
    "parse_key_reference",
    "parse_model",
    "parse_object",
    "parse_runtime",
    "pick_effect",
    "pipeline_from_model_index",
    "pipeline_patch",
    "propose_fixes",
    "pvc_namespace_denial",
    "read_checked",
    "read_documents",
    "read_objects",
    "read_tree",
    "reasons",
    "render",
    "runtime_could_match",
    "schema_problems",
    "score",
    "score_breakdown",
    "score_terms",
    "select",
    "served_name",
    "size_score",
    "unmatchable_values",
    "unserved_fact",
    "validate",
    "verdict",
    "version_problem",
    "with_crd_defaults",
]
