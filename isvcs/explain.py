"""How the InferenceServices page presents a verdict: the groups it lists services in, the
label of a recorded verdict, and OME's long "no runtime found" error split per runtime."""

from __future__ import annotations

from dataclasses import dataclass

import matching
from inventory.parsed import Inventory
from matching import BLOCKED, SILENT, WAITING, IsvcOutcome

from .services import IsvcVerdict

# A shorter error is shown whole; a longer one behind a summary.
LONG_ERROR = 300

# The page's groups, in order: (id, heading, what it holds).
GROUPS = (
    ("blocked", "Blocked", "OME would not deploy these today."),
    (
        "waiting",
        "Waiting for the model",
        "OME waits for these services' Sharded models to become Ready and checks again every 5 s.",
    ),
    (
        "silent",
        "Admitted, silently not deployed",
        "OME admitted these and chose a runtime, then found no model of the kind each asks for (or a BaseModel "
        "shadows it): it creates no workload and records no event; only its log says so.",
    ),
    (
        "changed",
        "Decided differently today",
        "OME decided one thing when the service was first seen; today it would decide another.",
    ),
    ("unchanged", "Unchanged", "OME would decide today as it did when the service was first seen."),
)


def group_of(verdict: IsvcVerdict) -> str:
    if verdict.verdict in (BLOCKED, WAITING, SILENT):
        return verdict.verdict
    return "changed" if verdict.drift is not None else "unchanged"


def verdict_label(verdict: str) -> str:
    """The words for a verdict (selected, named, advisory, blocked, waiting, silent), as today's column says them."""
    return IsvcOutcome(verdict=verdict, behaviour="").label


@dataclass(frozen=True)
class ErrorParts:
    """OME's error for display: its head and, for "no runtime found", each excluded runtime with
    OME's reason (so that a long error is a list to open runtime by runtime, not a wall)."""

    head: str
    excluded: list[tuple[str, str]]
    long: bool

    @property
    def split(self) -> bool:
        return bool(self.excluded)


def error_parts(inventory: Inventory, verdict: IsvcVerdict) -> ErrorParts | None:
    error = verdict.error or ""
    if not error:
        return None
    whole = ErrorParts(head=error, excluded=[], long=len(error) > LONG_ERROR)
    service = inventory.isvcs.get(verdict.key)
    model = inventory.models.get(verdict.model) if verdict.model is not None else None
    if verdict.failure != "no-runtime" or service is None or model is None:
        return whole
    # The same selection that produced the error, read as data rather than parsed from the text.
    selection = matching.select(model, inventory.runtimes.values(), service, behaviour=verdict.behaviour)
    if selection.error != error or not selection.excluded or selection.error_head is None:
        return whole
    return ErrorParts(head=selection.error_head, excluded=list(selection.excluded.items()), long=whole.long)
