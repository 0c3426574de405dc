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
    (
        "silent",
        "Silently ignored by OME",
        "OME admits these (or admitted them) but will not render or re-render them as asked, and says little or "
        "nothing about it: no event, or only a line in the controller's log. Each has its one-line fix.",
    ),
    ("blocked", "Blocked", "OME would not deploy these today."),
    (
        "waiting",
        "Waiting for the model",
        "OME waits for these services' Sharded models to become Ready and checks again every 5 s.",
    ),
    (
        "reapply",
        "Waiting for a re-apply",
        "A model changed since OME last decided these, and OME would decide differently now. OME does not watch "
        "models: it decides again only when the service's spec, labels or annotations change. Run the command.",
    ),
    (
        "changed",
        "Decided differently today",
        "OME decided one thing when the service was first seen; today it would decide another.",
    ),
    ("unchanged", "Unchanged", "OME would decide today as it did when the service was first seen."),
)


def group_of(verdict: IsvcVerdict) -> str:
    if verdict.ignored is not None or verdict.verdict == SILENT:
        return SILENT
    if verdict.verdict in (BLOCKED, WAITING):
        return verdict.verdict
    if verdict.reapply is not None:
        return "reapply"
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
