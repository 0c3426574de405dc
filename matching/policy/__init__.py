"""Policies: assertions about OME's verdicts ("llama-3-3-70b-instruct in team-a is served by
vllm-llama-3-3-70b-instruct", "no InferenceService is blocked"), read from versioned YAML
files (`schema.json`), evaluated over any set of objects, reported in the formats of the
`matching` command line. docs/policies.md is the reader's guide."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..types import ObjectKey
from .evaluate import Failure, Labels, Outcome, evaluate
from .load import POLICY_TEXT_LIMITS, PolicyError, field_path, load_policies, policies_from_text
from .report import PolicySection, exit_code, json_report, render, summary
from .schema import SCHEMA_FILE, policy_schema, problems
from .types import API_VERSION, ASSERTIONS, BASELINE_ASSERTIONS, ERROR, KIND, WARNING, Assertion, Policy, Subjects
from .verdicts import Baseline, Row, Verdicts, baseline_from_dict


def labels_of(items: Iterable[tuple[Mapping[str, Any], Any]]) -> dict[ObjectKey, Mapping[str, str]]:
    """The metadata.labels of (object, parsed value) pairs, by the value's key (string values only)."""
    found: dict[ObjectKey, Mapping[str, str]] = {}
    for obj, value in items:
        metadata = obj.get("metadata")
        labels = metadata.get("labels") if isinstance(metadata, Mapping) else None
        if isinstance(labels, Mapping):
            found[value.key] = {str(k): v for k, v in labels.items() if isinstance(v, str)}
    return found


__all__ = [
    "API_VERSION",
    "ASSERTIONS",
    "BASELINE_ASSERTIONS",
    "ERROR",
    "KIND",
    "POLICY_TEXT_LIMITS",
    "SCHEMA_FILE",
    "WARNING",
    "Assertion",
    "Baseline",
    "Failure",
    "Labels",
    "Outcome",
    "Policy",
    "PolicyError",
    "PolicySection",
    "Row",
    "Subjects",
    "Verdicts",
    "baseline_from_dict",
    "evaluate",
    "exit_code",
    "field_path",
    "json_report",
    "labels_of",
    "load_policies",
    "policies_from_text",
    "policy_schema",
    "problems",
    "render",
    "summary",
]
