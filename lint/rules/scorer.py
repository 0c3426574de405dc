"""Findings about the scorer quirks that give surprising winners: `namespace-beats-higher-score`
(Q1), `score-from-unmatched-entry` (Q2), `auto-selected-via-other-entry` (Q3),
`no-range-wins-size-tiebreak` and `size-tiebreak-undefined` (Q16), and `zero-score` (negative
weights or priority, so a matching runtime is never auto-selected)."""

from __future__ import annotations

from collections import defaultdict

from matching import (
    Behaviour,
    Model,
    ObjectKey,
    Runtime,
    entry_passes,
    entry_score,
    key_dict,
    key_text,
    reasons,
    size_score,
)

from .report import MODEL_LIST_LIMIT, Finding, key_names
from .selections import Row, Rows


def _honest_score(model: Model, runtime: Runtime, behaviour: Behaviour) -> int:
    """The score the matching entries alone would give (what users expect the score to be)."""
    scores = [
        entry_score(model, entry, entry.effective_priority, behaviour)
        for entry in runtime.entries
        if entry.auto_select is not False and entry_passes(model, entry, behaviour)
    ]
    return max([0, *scores])


def _scoring_entry(model: Model, runtime: Runtime, behaviour: Behaviour) -> int | None:
    best, index = 0, None
    for position, entry in enumerate(runtime.entries):
        if entry.auto_select is False:
            continue
        points = entry_score(model, entry, entry.effective_priority, behaviour)
        if points > best:
            best, index = points, position
    return index


class _Aggregate:
    """Findings of one code grouped by runtime(s): models and namespaces collected."""

    def __init__(self) -> None:
        self.models: dict[tuple[ObjectKey, ...], set[ObjectKey]] = defaultdict(set)
        self.namespaces: dict[tuple[ObjectKey, ...], set[str]] = defaultdict(set)
        self.details: dict[tuple[ObjectKey, ...], list[dict[str, object]]] = defaultdict(list)

    def add(self, runtimes: tuple[ObjectKey, ...], model: ObjectKey, namespace: str, detail: dict[str, object]) -> None:
        if model not in self.models[runtimes]:
            self.details[runtimes].append({"model": key_dict(model), "namespace": namespace, **detail})
        self.models[runtimes].add(model)
        self.namespaces[runtimes].add(namespace)


class _Quirks:
    """The rows' scorer quirks, collected per code (each one _Aggregate) row by row."""

    def __init__(self, rows: Rows) -> None:
        self.rows = rows
        self.q1, self.q2, self.q3, self.no_range, self.undefined, self.zero = (_Aggregate() for _ in range(6))
        self._entry_facts: dict[tuple[ObjectKey, ObjectKey], tuple[int, bool]] = {}
        for row in rows.rows:
            self._zero_score(row)
            if row.ranked:
                self._namespace_first(row)
                self._entry_quirks(row)
                self._size_tiebreaks(row)

    def _zero_score(self, row: Row) -> None:
        for runtime_key, reason in row.manual:
            if reason.startswith(reasons.MANUAL_ZERO_SCORE) or "is not autoSelect-enabled" in reason:
                causes = _zero_score_causes(self.rows.inventory.runtimes[runtime_key])
                if causes:
                    self.zero.add((runtime_key,), row.model, row.namespace, {"causes": causes})

    def _namespace_first(self, row: Row) -> None:
        """Q1: a namespaced winner over a cluster runtime with a higher score."""
        winner = row.ranked[0]
        if self.rows.inventory.runtimes[winner.key].is_cluster:
            return
        for item in row.ranked[1:]:
            if item.is_cluster and item.score > winner.score:
                self.q1.add((winner.key, item.key), row.model, row.namespace, {"scores": [winner.score, item.score]})

    def _entry_quirks(self, row: Row) -> None:
        """Q2 and Q3, which need more than one entry: a lone entry is the one that matched and scored."""
        winner_key, winner_score = row.ranked[0].key, row.ranked[0].score
        winner = self.rows.inventory.runtimes[winner_key]
        if len(winner.entries) <= 1:
            return
        model = self.rows.inventory.models[row.model]
        facts = self._entry_facts.get((row.model, winner_key))
        if facts is None:
            behaviour = self.rows.inventory.behaviour
            passing = [entry for entry in winner.entries if entry_passes(model, entry, behaviour)]
            facts = self._entry_facts[(row.model, winner_key)] = (
                _honest_score(model, winner, behaviour),
                not any(entry.auto_select is True for entry in passing),
            )
        honest, no_auto_match = facts
        # Q2: the winner's score comes from an entry that does not match the model.
        if winner_score > honest:
            runner_up = row.ranked[1].score if len(row.ranked) > 1 else None
            detail: dict[str, object] = {
                "score": winner_score,
                "matching_entries_score": honest,
                "scoring_entry": _scoring_entry(model, winner, self.rows.inventory.behaviour),
                "runner_up_score": runner_up,
                "decides_pick": runner_up is not None and runner_up >= honest,
            }
            self.q2.add((winner_key,), row.model, row.namespace, detail)
        # Q3: auto-selected although no matching entry has autoSelect: true.
        if no_auto_match:
            self.q3.add((winner_key,), row.model, row.namespace, {"matched_entry": row.ranked[0].entry or 0})

    def _size_tiebreaks(self, row: Row) -> None:
        """Q16: size tie-breaks among runtimes of the winner's scope with the same score."""
        size = self.rows.size(row.model)
        if size is None:
            return
        inventory = self.rows.inventory
        model = inventory.models[row.model]
        winner_key, winner_score = row.ranked[0].key, row.ranked[0].score
        winner = inventory.runtimes[winner_key]
        for item in row.ranked[1:]:
            other = inventory.runtimes[item.key]
            if other.is_cluster != winner.is_cluster or item.score != winner_score:
                continue
            pair = (winner_key, item.key)
            if winner.size_range is None and other.size_range is not None:
                detail: dict[str, object] = {"range": other.size_range.describe(), "size": model.size}
                self.no_range.add(pair, row.model, row.namespace, detail)
            elif winner.size_range is not None and other.size_range is not None:
                gap = size_score(size, winner) - size_score(size, other)
                if gap != 0 and int(gap) == 0:
                    self.undefined.add(pair, row.model, row.namespace, {"size": model.size})


def scorer_quirks(rows: Rows) -> list[Finding]:
    quirks = _Quirks(rows)
    findings = []
    for runtimes in sorted(quirks.q1.models):
        findings.append(
            _aggregate_finding(
                "warning",
                "namespace-beats-higher-score",
                f"{key_text(runtimes[0])} (namespaced) is picked over {key_text(runtimes[1])}, which scores higher, "
                f"because OME ranks every ServingRuntime of the namespace before any ClusterServingRuntime (Q1)",
                runtimes,
                quirks.q1,
            )
        )
    for runtimes in sorted(quirks.q2.models):
        decides = any(detail["decides_pick"] for detail in quirks.q2.details[runtimes])
        findings.append(
            _aggregate_finding(
                "warning",
                "score-from-unmatched-entry",
                f"{key_text(runtimes[0])} wins with a score taken from an entry that does not match the model "
                "(OME scores every entry not autoSelect: false, Q2)"
                + ("; without it another runtime would win or tie" if decides else ""),
                runtimes,
                quirks.q2,
            )
        )
    for runtimes in sorted(quirks.q3.models):
        findings.append(
            _aggregate_finding(
                "warning",
                "auto-selected-via-other-entry",
                f"{key_text(runtimes[0])} is auto-selected although the entries that match have no autoSelect: true; "
                "another entry's autoSelect makes the whole runtime auto-selectable (Q3)",
                runtimes,
                quirks.q3,
            )
        )
    findings += _size_findings(quirks)
    for runtimes in sorted(quirks.zero.models):
        causes = sorted({cause for detail in quirks.zero.details[runtimes] for cause in detail["causes"]})  # type: ignore[attr-defined]
        findings.append(
            _aggregate_finding(
                "warning",
                "zero-score",
                f"{key_text(runtimes[0])} matches models and has autoSelect: true, but scores 0 ({'; '.join(causes)}), "
                "so OME never auto-selects it",
                runtimes,
                quirks.zero,
            )
        )
    return findings


def _size_findings(quirks: _Quirks) -> list[Finding]:
    findings = []
    for runtimes in sorted(quirks.no_range.models):
        findings.append(
            _aggregate_finding(
                "info",
                "no-range-wins-size-tiebreak",
                f"{key_text(runtimes[0])} has no modelSizeRange and so wins the size tie-break against "
                f"{key_text(runtimes[1])}, whose range fits the model (Q16)",
                runtimes,
                quirks.no_range,
            )
        )
    for runtimes in sorted(quirks.undefined.models):
        findings.append(
            _aggregate_finding(
                "warning",
                "size-tiebreak-undefined",
                f"{key_text(runtimes[0])} and {key_text(runtimes[1])} tie on score and their size scores differ by "
                "less than 1, which OME truncates to a tie that skips the name order: OME's pick is undefined (Q16)",
                runtimes,
                quirks.undefined,
            )
        )
    return findings


def _aggregate_finding(
    severity: str, code: str, message: str, runtimes: tuple[ObjectKey, ...], aggregate: _Aggregate
) -> Finding:
    models = sorted(aggregate.models[runtimes])
    return Finding(
        severity,
        code,
        f"{message}: {key_names(models)}",
        runtimes=list(runtimes),
        models=models,
        namespaces=sorted(aggregate.namespaces[runtimes]),
        details={"rows": aggregate.details[runtimes][:MODEL_LIST_LIMIT]},
    )


def _zero_score_causes(runtime: Runtime) -> list[str]:
    causes = []
    for index, entry in enumerate(runtime.entries):
        for label, ref in (("modelFormat", entry.format), ("modelFramework", entry.framework)):
            if ref is not None and ref.weight < 0:
                causes.append(f"entry {index} {label}.weight {ref.weight}")
        if entry.priority is not None and entry.priority < 1:
            causes.append(f"entry {index} priority {entry.priority}")
    return causes
