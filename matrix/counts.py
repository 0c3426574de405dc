"""One definition of each count of models, said with its scope, for the matrix page, the fleet
and the API: the models of one namespace (a namespace's rows: its BaseModels and every
ClusterBaseModel), or of the whole cluster, each model once where it lives (its namespace, or
cluster scope for a ClusterBaseModel: `matching.home_namespace`)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, F, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Coalesce

from access.scope import Scope
from inventory.models import Kind

from .models import MatrixRow
from .outcomes import INVALID, MANUAL_ONLY, NO_MATCH, outcome_counts
from .selectors import rows_visible

ACROSS = None
"""The namespace argument for the whole cluster."""

ACROSS_TEXT = "across the cluster"


HOME = Q(model__kind=Kind.BASE_MODEL, namespace=F("model__namespace")) | (
    ~Q(model__kind=Kind.BASE_MODEL) & Q(namespace="")
)
"""A model's row where it lives: a BaseModel's in its namespace, a ClusterBaseModel's in
cluster scope (`matching.home_namespace`)."""


def counted_rows(rows: QuerySet[MatrixRow], namespace: str | None) -> QuerySet[MatrixRow]:
    """The rows a count of `namespace` counts: the namespace's rows; ACROSS: each model's row
    where it lives."""
    return rows.filter(HOME) if namespace is ACROSS else rows.filter(namespace=namespace)


def whole_cluster_rows(rows: QuerySet[MatrixRow], *, scope: Scope) -> QuerySet[MatrixRow]:
    """The rows a list of the whole cluster shows: each model's row where it lives, and a
    ClusterBaseModel's row in a namespace only where OME decides differently there than in
    cluster scope (outcome, pick, score or matches: the rule of `matching.fold_everywhere`)."""
    alike = rows_visible(scope).filter(
        build=OuterRef("build"),
        model=OuterRef("model"),
        namespace="",
        outcome=OuterRef("outcome"),
        compatible=OuterRef("compatible"),
        manual=OuterRef("manual"),
    )
    alike = alike.alias(
        pick=Coalesce("selected_id", Value(0)), points=Coalesce("selected_score", Value(-(2**31)))
    ).filter(
        pick=Coalesce(OuterRef("selected_id"), Value(0)), points=Coalesce(OuterRef("selected_score"), Value(-(2**31)))
    )
    return rows.filter(HOME | ~Exists(alike))


def whole_cluster_list(rows: QuerySet[MatrixRow], *, scope: Scope, by_outcome: bool) -> QuerySet[MatrixRow]:
    """The rows `namespace=_all` lists. Filtered by outcome (the list a count links to), the
    rows the count counts: each model once, where it lives, so "133 without a runtime" lists
    133 models. Unfiltered (the grid), also a ClusterBaseModel's row in each namespace where OME
    decides differently (`whole_cluster_rows`)."""
    return counted_rows(rows, ACROSS) if by_outcome else whole_cluster_rows(rows, scope=scope)


@dataclass(frozen=True)
class ModelCounts:
    """How many models a scope has, and how many of them OME gives no runtime: no match at all,
    or manual-only matches only (an InferenceService naming one still works), or invalid."""

    namespace: str | None
    models: int
    no_match: int
    manual_only: int
    invalid: int

    @property
    def without_runtime(self) -> int:
        """No runtime selected: no match at all or manual-only matches only (invalid apart)."""
        return self.no_match + self.manual_only

    @property
    def where(self) -> str:
        """The scope, as said next to the numbers: "in namespace x", "in cluster scope" or
        "across the cluster"."""
        if self.namespace is ACROSS:
            return ACROSS_TEXT
        return f"in namespace {self.namespace}" if self.namespace else "in cluster scope"

    def to_dict(self) -> dict[str, object]:
        return {
            "where": self.where,
            "models": self.models,
            "without_runtime": self.without_runtime,
            "no_match": self.no_match,
            "manual_only": self.manual_only,
            "invalid": self.invalid,
        }


def model_counts(rows: QuerySet[MatrixRow], namespace: str | None) -> ModelCounts:
    """The counts of `namespace` (ACROSS: the whole cluster) among `rows`, one build's rows as
    the reader reads them; one query."""
    outcomes = outcome_counts(counted_rows(rows, namespace))
    return ModelCounts(
        namespace=namespace,
        models=sum(outcomes.values()),
        no_match=outcomes[NO_MATCH],
        manual_only=outcomes[MANUAL_ONLY],
        invalid=outcomes[INVALID],
    )
