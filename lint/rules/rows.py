"""Findings from what OME picks today: `shadowed` runtimes that match models but always lose,
and runtimes that match no model (`matches-no-model`), with the models closest to them."""

from __future__ import annotations

from collections import defaultdict

from inventory.parsed import Inventory
from matching import CandidateIndex, Match, ObjectKey, Runtime, key_dict, key_text, size_score

from .report import Finding, key_names
from .selections import Ranked, Rows

_NEAR_MISS_LIMIT = 3


# Why a shadowed runtime loses to a winner: code -> words.
WHY_LOSES = {
    "namespace-first": "namespace ServingRuntimes rank before ClusterServingRuntimes (Q1)",
    "higher-score": "higher score",
    "no-range-wins": "size tie-break: a runtime without modelSizeRange wins (Q16)",
    "narrower-range-wins": "size tie-break: the narrower modelSizeRange wins (Q16)",
    "name-order": "same score, name order",
}


def _why_loses(inventory: Inventory, size: float | None, loser: Ranked, winner: Match) -> str:
    """The WHY_LOSES code of a loss."""
    loser_rt, winner_rt = inventory.runtimes[loser.runtime], inventory.runtimes[winner.key]
    if winner_rt.is_cluster != loser_rt.is_cluster:
        return "namespace-first"
    if winner.score != loser.score:
        return "higher-score"
    if size is not None and int(size_score(size, winner_rt) - size_score(size, loser_rt)) != 0:
        return "no-range-wins" if winner_rt.size_range is None else "narrower-range-wins"
    return "name-order"


def shadowed(rows: Rows) -> list[Finding]:
    inventory = rows.inventory
    findings = []
    for runtime_key, items in sorted(rows.ranked.items()):
        if any(item.rank == 0 for item in items):
            continue
        winners: dict[ObjectKey, set[str]] = defaultdict(set)
        scores: dict[ObjectKey, set[tuple[int, int]]] = defaultdict(set)
        for item in items:
            winner = item.row.ranked[0]
            winners[winner.key].add(_why_loses(inventory, rows.size(item.model), item, winner))
            scores[winner.key].add((winner.score, item.score))
        models = sorted({item.model for item in items})
        beaten_by = "; ".join(
            f"{key_text(key)} ({', '.join(_why_text(code, scores[key]) for code in sorted(why))})"
            for key, why in sorted(winners.items())
        )
        findings.append(
            Finding(
                "warning",
                "shadowed",
                f"{key_text(runtime_key)} can be auto-selected for {len(models)} model(s) "
                f"({key_names(models)}) but OME never picks it: {beaten_by} always ranks first",
                runtimes=[runtime_key, *sorted(winners)],
                models=models,
                namespaces=sorted({item.namespace for item in items}),
                details={
                    "winners": [key_dict(key) for key in sorted(winners)],
                    "beaten_by": [
                        {"runtime": key_dict(key), "why": sorted(why)} for key, why in sorted(winners.items())
                    ],
                },
            )
        )
    return findings


def _why_text(code: str, scores: set[tuple[int, int]]) -> str:
    if code == "higher-score":
        return ", ".join(f"higher score ({won} vs {lost})" for won, lost in sorted(scores) if won != lost)
    return WHY_LOSES[code]


def _near_misses(inventory: Inventory, index: CandidateIndex, runtime: Runtime) -> list[dict[str, object]]:
    """Models that share an entry's format, architecture, quantization and framework name,
    with OME's reason: what stops the runtime from matching the models closest to it."""
    found: list[dict[str, object]] = []
    for model_key in index.candidates(runtime):
        if inventory.models[model_key].format.name:
            reason = inventory.grid.reason(model_key, runtime.key)
            if reason:
                found.append({"model": key_dict(model_key), "reason": reason})
            if len(found) >= _NEAR_MISS_LIMIT:
                break
    return found


def matches_nothing(rows: Rows, index: CandidateIndex) -> list[Finding]:
    inventory = rows.inventory
    findings = []
    for runtime_key, runtime in sorted(inventory.runtimes.items()):
        if runtime.is_disabled or not runtime.entries:
            continue
        if runtime_key in rows.ranked or runtime_key in rows.manual:
            continue
        near = _near_misses(inventory, index, runtime)
        hint = f"; closest: {near[0]['model']['name']} ({near[0]['reason']})" if near else ""  # type: ignore[index]
        findings.append(
            Finding(
                "info",
                "matches-no-model",
                f"{key_text(runtime_key)} matches no model in the cluster{hint}",
                runtimes=[runtime_key],
                details={"near_misses": near},
            )
        )
    return findings
