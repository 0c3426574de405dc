"""OME's scorer and runtime ordering (section 4)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .behaviour import DEFAULT_BEHAVIOUR, Behaviour, BehaviourInput, as_behaviour
from .rules import SHARDED, provider_problem, versions_match
from .sizes import parse_size
from .types import Entry, Model, Runtime

DEFAULT_FORMAT_WEIGHT = 10
DEFAULT_FRAMEWORK_WEIGHT = 5


def _int64(value: int) -> int:
    """Wrap like Go's int64 arithmetic: an overflowing score turns negative, as in OME."""
    return (value + 2**63) % 2**64 - 2**63


def skipped_by_scorer(model: Model, entry: Entry, behaviour: Behaviour) -> bool:
    """U3s: newer OME's scorer gives 0 to formats that fail a Sharded model's cache-provider test."""
    if model.distribution != SHARDED or not behaviour.has("U3s"):
        return False
    return provider_problem(model, entry) is not None


def entry_score(model: Model, entry: Entry, priority: int, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR) -> int:
    """CalculateFormatScore: format and framework names and versions only (4.1).

    Unlike the matcher, a version on one side only still counts as matched. Under proposal
    ome#603 (P603) a matching entry scores its priority: "CalculateScore returns the
    best-matching format's priority; the old Weight x Priority math is removed" (the pull
    request's description, ome-projects/ome#603).
    """
    profile = as_behaviour(behaviour)
    if skipped_by_scorer(model, entry, profile):
        return 0
    if entry.format is not None:
        if entry.format.name != model.format.name:
            return 0
        both_versioned = entry.format.version is not None and model.format.version is not None
        if both_versioned and not versions_match(model.format.version, entry.format):
            return 0
    framework_matched = False
    if entry.framework is not None and model.framework is not None:
        if entry.framework.name != model.framework.name:
            return 0
        both_versioned = entry.framework.version is not None and model.framework.version is not None
        if both_versioned and not versions_match(model.framework.version, entry.framework):
            return 0
        framework_matched = True
    elif entry.framework is not None or model.framework is not None:
        return 0
    if profile.has("P603"):
        return priority if entry.format is not None else 0
    score = 0
    if entry.format is not None:
        score = _int64(score + _int64((entry.format.weight or DEFAULT_FORMAT_WEIGHT) * priority))
    if framework_matched and entry.framework is not None:
        score = _int64(score + _int64((entry.framework.weight or DEFAULT_FRAMEWORK_WEIGHT) * priority))
    return score


def runtime_score(model: Model, runtime: Runtime, behaviour: Behaviour) -> int:
    """The best entry score over entries not explicitly `autoSelect: false`, matching or not
    (quirks Q2, Q4); never below 0."""
    scores = [
        entry_score(model, entry, entry.effective_priority, behaviour)
        for entry in runtime.entries
        if entry.auto_select is not False
    ]
    return max([0, *scores])


@dataclass(frozen=True, slots=True)
class ScoreTerms:
    """One entry's score as data: the weights that count (`format`, `framework`), the priority
    they are multiplied by, and the result. No weights when the format or framework does not
    score, or the scorer skips the entry (the result is then 0)."""

    weights: tuple[tuple[str, int], ...]
    priority: int
    result: int

    def to_dict(self) -> dict[str, object]:
        return {"weights": dict(self.weights), "priority": self.priority, "result": self.result}


def score_terms(model: Model, entry: Entry, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR) -> ScoreTerms:
    """The terms of one entry's score (CalculateFormatScore, 4.1)."""
    behaviour = as_behaviour(behaviour)
    priority = entry.effective_priority
    if skipped_by_scorer(model, entry, behaviour):
        return ScoreTerms((), priority, 0)
    total = entry_score(model, entry, priority, behaviour)
    weights: list[tuple[str, int]] = []
    if total != 0 and not behaviour.has("P603"):
        if entry.format is not None:
            weights.append(("format", entry.format.weight or DEFAULT_FORMAT_WEIGHT))
        if entry.framework is not None and model.framework is not None:
            weights.append(("framework", entry.framework.weight or DEFAULT_FRAMEWORK_WEIGHT))
    return ScoreTerms(tuple(weights), priority, total)


def score_breakdown(model: Model, entry: Entry, behaviour: BehaviourInput = DEFAULT_BEHAVIOUR) -> str:
    """The arithmetic of one entry's score, for explanations: `(10 + 5) x 2 = 30`."""
    behaviour = as_behaviour(behaviour)
    if skipped_by_scorer(model, entry, behaviour):
        return "0 (a Sharded model: the scorer skips formats without the model cache provider)"
    terms = score_terms(model, entry, behaviour)
    if terms.result == 0:
        return "0 (format or framework does not score)"
    if behaviour.has("P603"):
        return f"{terms.result} (the priority: proposal ome#603 drops the weights)"
    values = [str(weight) for _name, weight in terms.weights]
    weights = values[0] if len(values) == 1 else f"({' + '.join(values)})"
    return f"{weights} x {terms.priority} = {terms.result}"


def size_score(model_size: float, runtime: Runtime) -> float:
    return 0.0 if runtime.size_range is None else runtime.size_range.size_score(model_size)


def compare_runtimes(first: tuple[Runtime, int], second: tuple[Runtime, int], model_size: float | None) -> int:
    """CompareRuntimes (4.3): positive when `first` ranks before `second`."""
    (runtime1, score1), (runtime2, score2) = first, second
    if score1 != score2:
        return 1 if score1 > score2 else -1
    if model_size is not None:
        difference = size_score(model_size, runtime1) - size_score(model_size, runtime2)
        if difference != 0 and not math.isnan(difference):
            # OME truncates to an integer first: a gap below 1 is a tie that skips the
            # remaining criteria (quirk Q16).
            truncated = int(difference) if math.isfinite(difference) else int(math.copysign(1, difference))
            return 0 if truncated == 0 else (1 if truncated < 0 else -1)
    if runtime1.is_cluster != runtime2.is_cluster:
        return -1 if runtime1.is_cluster else 1
    if runtime1.name != runtime2.name:
        return 1 if runtime1.name < runtime2.name else -1
    return 0


def model_size_value(model: Model) -> float | None:
    return None if model.size is None else parse_size(model.size)


def fetch_order(runtimes: Sequence[Runtime]) -> list[Runtime]:
    """OME's fetcher order: newest creationTimestamp first, then name."""
    by_name = sorted(runtimes, key=lambda runtime: runtime.name)
    return sorted(by_name, key=lambda runtime: runtime.created, reverse=True)
