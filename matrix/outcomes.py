"""A row's outcome as the matrix page tells it: OME's "no runtime found" split into rows with
no match at all and rows whose only matches are manual-only (an InferenceService that names
one of those runtimes still works, so they are not the same trouble)."""

from __future__ import annotations

from django.db.models import Count, Q, QuerySet

from .models import MatrixRow

SELECTED = MatrixRow.Outcome.SELECTED.value
NO_RUNTIME = MatrixRow.Outcome.NO_RUNTIME.value
INVALID = MatrixRow.Outcome.INVALID.value
MANUAL_ONLY = "manual-only"
NO_MATCH = "no-match"

OUTCOME_CHOICES = [
    (SELECTED, "a runtime is selected"),
    (MANUAL_ONLY, "manual-only matches only"),
    (NO_MATCH, "no match at all"),
    (NO_RUNTIME, "no runtime selected (either)"),
    (INVALID, "invalid model"),
]


def outcome_filter(rows: QuerySet[MatrixRow], value: str) -> QuerySet[MatrixRow]:
    """The rows with this page outcome."""
    if value == MANUAL_ONLY:
        return rows.filter(outcome=NO_RUNTIME).exclude(manual=[])
    if value == NO_MATCH:
        return rows.filter(outcome=NO_RUNTIME, manual=[])
    return rows.filter(outcome=value) if value else rows


def row_outcome(row: MatrixRow) -> str:
    """selected, manual-only, no-match or invalid."""
    if row.outcome == NO_RUNTIME:
        return MANUAL_ONLY if row.manual else NO_MATCH
    return str(row.outcome)


def outcome_counts(rows: QuerySet[MatrixRow]) -> dict[str, int]:
    """How many of the rows have each page outcome, in one query (NO_RUNTIME is the sum of
    MANUAL_ONLY and NO_MATCH)."""
    no_runtime = Q(outcome=NO_RUNTIME)
    counts = rows.aggregate(
        **{
            SELECTED: Count("pk", filter=Q(outcome=SELECTED)),
            INVALID: Count("pk", filter=Q(outcome=INVALID)),
            MANUAL_ONLY: Count("pk", filter=no_runtime & ~Q(manual=[])),
            NO_MATCH: Count("pk", filter=no_runtime & Q(manual=[])),
        }
    )
    return {key: int(value or 0) for key, value in counts.items()}
