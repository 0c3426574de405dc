"""A policy as values: assertions about OME's verdicts, each with a severity, a scope and an
owner. Built by `matching.policy.load`; frozen, so an evaluation cannot change them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from ..types import Model
from .models import ModelSelector

API_VERSION = "compat.ome.io/v1alpha1"
KIND = "RuntimePolicy"
ERROR = "error"
WARNING = "warning"

ASSERTIONS: dict[str, str] = {
    "servedBy": "the models in scope are served by the named runtime (OME picks it)",
    "hasRuntime": "the models in scope have an auto-selected runtime",
    "pickUnchanged": "the models in scope keep the runtime OME picks (a pin that reports drift)",
    "notBlocked": "no InferenceService in scope is blocked",
    "decisionUnchanged": "OME decides no InferenceService in scope differently (verdict, model, runtime)",
    "pickCount": "the named runtime is the pick for at least `atLeast` and at most `atMost` models in scope",
    "notShadowed": "no runtime in scope matches a model yet always loses to another runtime",
    "minScore": "the score of every pick in scope stays at least `score`",
    "notIgnored": "OME silently ignores no InferenceService in scope: none it admits but will not (re)render "
    "(wrong model kind, a shadowing BaseModel, a cross-namespace PVC, a broken runtime chain, a disabled "
    "model or runtime, a named runtime that drops the service's accelerator class)",
}
"""Every assertion kind (`assert:`), with what it requires."""

ISVC_ASSERTIONS = frozenset({"notBlocked", "decisionUnchanged", "notIgnored"})
"""Kinds whose subjects are InferenceServices; `notShadowed`'s are runtimes, the others' models."""

BASELINE_ASSERTIONS = frozenset({"pickUnchanged", "decisionUnchanged"})
"""Kinds that compare with a baseline (BASE of a diff, the cluster before a check, the
verdicts recorded when the policy was first evaluated)."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `matchExpressions` item of a label selector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        inside = labels.get(self.key) in self.values
        return inside if self.operator == "In" else not inside


@dataclass(frozen=True, slots=True)
class Subjects:
    """Which objects an assertion is about (its `scope` in a policy file). An empty field does not narrow; globs are
    shell-style (`prod-*`), case-sensitive. `namespaces` never matches cluster scope ("")."""

    clusters: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[Requirement, ...] = ()
    models: ModelSelector | None = None
    """Models by what they are (`scope.models`); None does not narrow."""

    def covers_model(self, model: Model | None) -> bool:
        """Whether the model's facts are selected (a subject without a model is not, once set)."""
        return self.models is None or self.models.matches(model)

    def covers_cluster(self, cluster: str | None) -> bool:
        """A tree checked without a cluster name (`matching check`) is in every cluster's scope."""
        return cluster is None or _any(self.clusters, cluster)

    def covers_namespace(self, namespace: str) -> bool:
        return not self.namespaces or bool(namespace and _any(self.namespaces, namespace))

    def covers(self, namespace: str, name: str, labels: Mapping[str, str]) -> bool:
        return self.covers_namespace(namespace) and self.covers_name(name, labels)

    def covers_name(self, name: str, labels: Mapping[str, str]) -> bool:
        if not _any(self.names, name):
            return False
        if any(labels.get(key) != value for key, value in self.match_labels):
            return False
        return all(requirement.matches(labels) for requirement in self.match_expressions)


def _any(globs: tuple[str, ...], value: str) -> bool:
    return not globs or any(fnmatchcase(value, glob) for glob in globs)


@dataclass(frozen=True, slots=True)
class Assertion:
    """One assertion of a policy; `ident` is `policy/assertion`, unique across loaded policies."""

    policy: str
    name: str
    kind: str
    severity: str
    subjects: Subjects
    owner: str = ""
    description: str = ""
    runtime: str | None = None
    at_least: int | None = None
    at_most: int | None = None
    score: int | None = None
    where: str = ""
    """The file and line it was read from, for messages."""

    @property
    def ident(self) -> str:
        return f"{self.policy}/{self.name}"

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "id": self.ident,
            "policy": self.policy,
            "name": self.name,
            "assert": self.kind,
            "severity": self.severity,
            "owner": self.owner,
            "description": self.description,
        }
        options = {"runtime": self.runtime, "atLeast": self.at_least, "atMost": self.at_most, "score": self.score}
        return found | {key: value for key, value in options.items() if value is not None}


@dataclass(frozen=True, slots=True)
class Policy:
    """A policy document: its assertions, where it was read (`file:line`) and the document as
    written (for a dashboard to store)."""

    name: str
    assertions: tuple[Assertion, ...] = field(default_factory=tuple)
    where: str = ""
    file: str = ""
    document: Mapping[str, Any] = field(default_factory=dict, compare=False)
