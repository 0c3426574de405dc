"""Runtime lint: findings about a cluster's serving runtimes, from OME's selections and the grid.

Each finding has a severity (`error`, `warning`, `info`), a code, the runtimes and models it
concerns and a message. The checks:

- rows (what OME picks today): `shadowed` runtimes that match models but always lose;
  `matches-no-model`; the scorer quirks that give surprising winners: `namespace-beats-higher-score`
  (Q1), `score-from-unmatched-entry` (Q2), `auto-selected-via-other-entry` (Q3),
  `no-range-wins-size-tiebreak` and `size-tiebreak-undefined` (Q16), `zero-score` (negative
  weights or priority, so a matching runtime is never auto-selected);
- pipelines: `pipeline-would-exclude` (adding diffusionPipeline to a runtime would stop it
  matching models that have no recorded pipeline, the seed page's pvc:// warning) and
  `pipeline-missing-on-model` (a runtime with diffusionPipeline excludes models only for want of
  a recorded pipeline; `matching.pipeline_patch` fixes them);
- the runtime alone: `half-open-size-range` (Q22), `empty-size-range`, `inverted-size-range`,
  `unparsable-size-bound`, `unknown-operator`, `unparsable-version`, `entry-without-format`
  (Q23), `no-supported-formats`, `priority-below-1`, `negative-weight`,
  `empty-pipeline-requirement` (Q10).

The rows are the grid's selections over the cluster's cached Inventory (the same grid memos as
the matrix build), so they always agree with the inventory the findings name. Only pairs the
rows single out are checked one by one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import matching
from inventory.parsed import Inventory
from matching import CandidateIndex, Match, key_dict, key_text, reasons
from matching.rules import entry_passes
from matching.score import entry_score, model_size_value, size_score
from matching.select import model_error
from matching.sizes import go_parse_float
from matching.types import FormatRef, Model, ObjectKey, Runtime
from matching.versions import operator_problem, version_problem

__all__ = ["SEVERITIES", "Finding", "LintReport", "lint_inventory"]

SEVERITIES = ("error", "warning", "info")
_SEVERITY_RANK = {name: rank for rank, name in enumerate(SEVERITIES)}
_MODEL_LIST_LIMIT = 20
_NEAR_MISS_LIMIT = 3
_DIFFUSERS = "diffusers"


@dataclass(frozen=True)
class Finding:
    """One lint finding. `namespaces` are the matrix rows it was seen in ("" = cluster scope)."""

    severity: str
    code: str
    message: str
    runtimes: list[ObjectKey] = field(default_factory=list)
    models: list[ObjectKey] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    def sort_key(self) -> tuple[object, ...]:
        return (_SEVERITY_RANK[self.severity], self.code, self.runtimes, self.models, self.message)

    def to_dict(self) -> dict[str, object]:
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "runtimes": [key_dict(key) for key in self.runtimes],
            "models": [key_dict(key) for key in self.models],
            "namespaces": list(self.namespaces),
            "details": self.details,
        }


@dataclass(frozen=True)
class LintReport:
    cluster: str
    findings: list[Finding]

    def counts(self) -> dict[str, int]:
        found = dict.fromkeys(SEVERITIES, 0)
        for finding in self.findings:
            found[finding.severity] += 1
        return found

    def by_code(self, code: str) -> list[Finding]:
        return [finding for finding in self.findings if finding.code == code]

    def for_runtime(self, runtime: ObjectKey) -> list[Finding]:
        return [finding for finding in self.findings if runtime in finding.runtimes]

    def to_dict(self) -> dict[str, object]:
        codes: dict[str, int] = defaultdict(int)
        for finding in self.findings:
            codes[finding.code] += 1
        return {
            "cluster": self.cluster,
            "counts": self.counts(),
            "codes": dict(sorted(codes.items())),
            "findings": [finding.to_dict() for finding in self.findings],
        }


def _names(keys: Iterable[ObjectKey], limit: int = _MODEL_LIST_LIMIT) -> str:
    keys = list(keys)
    text = ", ".join(key[2] if not key[1] else f"{key[1]}/{key[2]}" for key in keys[:limit])
    return text if len(keys) <= limit else f"{text} and {len(keys) - limit} more"


def _scheme(model: Model) -> str:
    uri = model.storage_uri or ""
    return uri.split("://", 1)[0] + "://" if "://" in uri else ""


# --------------------------------------------------------------------------------------------
# The rows, indexed


@dataclass(frozen=True)
class _Row:
    """What OME picks for one valid model in one namespace: the ranked matches (best first)
    and the manual-only runtimes with why."""

    model: ObjectKey
    namespace: str
    ranked: tuple[Match, ...]
    manual: tuple[tuple[ObjectKey, str], ...]


@dataclass(frozen=True)
class _Ranked:
    runtime: ObjectKey
    model: ObjectKey
    namespace: str
    rank: int
    score: int
    entry: int
    row: _Row


def _selection_rows(inventory: Inventory) -> list[_Row]:
    """Every valid model's selection in each namespace it has a row in (as the matrix stores)."""
    rows = []
    for model_key, model in sorted(inventory.models.items()):
        if model_error(model) is not None:
            continue
        for namespace in inventory.namespaces_for(model_key):
            selection = inventory.grid.select(model_key, namespace)
            manual = tuple(sorted(selection.manual_keys.items()))
            rows.append(_Row(model_key, namespace, tuple(selection.compatible), manual))
    return rows


class _Rows:
    """The selection rows of an inventory, indexed by runtime."""

    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory
        self.rows = _selection_rows(inventory)
        self.ranked: dict[ObjectKey, list[_Ranked]] = defaultdict(list)
        self.manual: dict[ObjectKey, list[tuple[ObjectKey, str, str]]] = defaultdict(list)
        self._sizes: dict[ObjectKey, float | None] = {}
        for row in self.rows:
            for rank, match in enumerate(row.ranked):
                self.ranked[match.key].append(
                    _Ranked(match.key, row.model, row.namespace, rank, match.score, match.entry or 0, row)
                )
            for runtime_key, reason in row.manual:
                self.manual[runtime_key].append((row.model, row.namespace, reason))

    def size(self, model_key: ObjectKey) -> float | None:
        """The model's parsed size (memoised: a model has a row per namespace)."""
        if model_key not in self._sizes:
            self._sizes[model_key] = model_size_value(self.inventory.models[model_key])
        return self._sizes[model_key]

    def matched_models(self, runtime_key: ObjectKey) -> list[ObjectKey]:
        found = {item.model for item in self.ranked.get(runtime_key, ())}
        found |= {model for model, _ns, _reason in self.manual.get(runtime_key, ())}
        return sorted(found)


# --------------------------------------------------------------------------------------------
# (a) shadowed runtimes, (b) runtimes that match nothing


def _why_loses(inventory: Inventory, size: float | None, loser: _Ranked, winner: Match) -> str:
    loser_rt, winner_rt = inventory.runtimes[loser.runtime], inventory.runtimes[winner.key]
    winner_score = winner.score
    if winner_rt.is_cluster != loser_rt.is_cluster:
        return "namespace ServingRuntimes rank before ClusterServingRuntimes (Q1)"
    if winner_score != loser.score:
        return f"higher score ({winner_score} vs {loser.score})"
    if size is not None and int(size_score(size, winner_rt) - size_score(size, loser_rt)) != 0:
        return "size tie-break (narrower or no modelSizeRange wins)"
    return "same score, name order"


def _shadowed(rows: _Rows) -> list[Finding]:
    inventory = rows.inventory
    findings = []
    for runtime_key, items in sorted(rows.ranked.items()):
        if any(item.rank == 0 for item in items):
            continue
        winners: dict[ObjectKey, set[str]] = defaultdict(set)
        for item in items:
            winner = item.row.ranked[0]
            winners[winner.key].add(_why_loses(inventory, rows.size(item.model), item, winner))
        models = sorted({item.model for item in items})
        beaten_by = "; ".join(f"{key_text(key)} ({', '.join(sorted(why))})" for key, why in sorted(winners.items()))
        findings.append(
            Finding(
                "warning",
                "shadowed",
                f"{key_text(runtime_key)} can be auto-selected for {len(models)} model(s) "
                f"({_names(models)}) but OME never picks it: {beaten_by} always ranks first",
                runtimes=[runtime_key, *sorted(winners)],
                models=models,
                namespaces=sorted({item.namespace for item in items}),
                details={"winners": [key_dict(key) for key in sorted(winners)]},
            )
        )
    return findings


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


def _matches_nothing(rows: _Rows, index: CandidateIndex) -> list[Finding]:
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
                details={"nearMisses": near},
            )
        )
    return findings


# --------------------------------------------------------------------------------------------
# (c) diffusion pipelines


def _serves_diffusion(runtime: Runtime, models: Iterable[Model]) -> bool:
    for entry in runtime.entries:
        names = {ref.name for ref in (entry.format, entry.framework) if ref is not None}
        if entry.pipeline is not None or _DIFFUSERS in names or (entry.architecture or "").endswith("Pipeline"):
            return True
    return any(model.pipeline is not None or model.format.name == _DIFFUSERS for model in models)


def _pipeline_would_exclude(rows: _Rows) -> list[Finding]:
    inventory = rows.inventory
    findings = []
    for runtime_key, runtime in sorted(inventory.runtimes.items()):
        if runtime.is_disabled:
            continue
        matched = [inventory.models[key] for key in rows.matched_models(runtime_key)]
        if not matched or not _serves_diffusion(runtime, matched):
            continue
        bare = [model for model in matched if model.pipeline is None]
        if not bare:
            continue
        bare_keys = [model.key for model in bare]
        picked = sorted({item.model for item in rows.ranked.get(runtime_key, ()) if item.rank == 0} & set(bare_keys))
        schemes = sorted({_scheme(model) for model in bare if _scheme(model)})
        via = f" ({', '.join(schemes)})" if schemes else ""
        findings.append(
            Finding(
                "warning" if picked else "info",
                "pipeline-would-exclude",
                f"adding diffusionPipeline to the matching entries of {key_text(runtime_key)} would stop it matching "
                f"{len(bare)} model(s) with no recorded pipeline{via}: {_names(bare_keys)}"
                + (f"; OME picks it today for {_names(picked)}" if picked else "")
                + ". Set spec.diffusionPipeline on those models first",
                runtimes=[runtime_key],
                models=bare_keys,
                details={"selectedFor": [key_dict(key) for key in picked], "storageSchemes": schemes},
            )
        )
    return findings


def _pipeline_missing_on_model(inventory: Inventory, index: CandidateIndex) -> list[Finding]:
    findings = []
    for runtime_key, runtime in sorted(inventory.runtimes.items()):
        if runtime.is_disabled or not any(entry.pipeline is not None for entry in runtime.entries):
            continue
        pipeline_entries = [entry for entry in runtime.entries if entry.pipeline is not None]
        fixable: list[tuple[ObjectKey, dict[str, object] | None, bool]] = []
        for model_key in index.candidates(runtime, pipeline_entries):
            model = inventory.models[model_key]
            if not model.format.name or inventory.grid.verdict(model_key, runtime_key)[0]:
                continue
            plan = matching.pipeline_patch(model, runtime)
            if plan.patch is not None:
                fixable.append((model_key, plan.patch, model.pipeline is None))
        if not fixable:
            continue
        models = [key for key, _patch, _bare in fixable]
        missing = [key for key, _patch, bare in fixable if bare]
        partial = [key for key, _patch, bare in fixable if not bare]
        parts = []
        if missing:
            parts.append(f"{_names(missing)} (no recorded pipeline)")
        if partial:
            parts.append(f"{_names(partial)} (recorded pipeline lacks required fields)")
        findings.append(
            Finding(
                "warning",
                "pipeline-missing-on-model",
                f"{key_text(runtime_key)} excludes {len(models)} model(s) only because of their diffusionPipeline: "
                f"{'; '.join(parts)}. A merge patch of the model's spec.diffusionPipeline makes it match",
                runtimes=[runtime_key],
                models=models,
                details={"patches": [{"model": key_dict(key), "patch": patch} for key, patch, _bare in fixable]},
            )
        )
    return findings


# --------------------------------------------------------------------------------------------
# (d) scorer quirks


def _honest_score(model: Model, runtime: Runtime) -> int:
    """The score the matching entries alone would give (what users expect the score to be)."""
    scores = [
        entry_score(model, entry, entry.effective_priority)
        for entry in runtime.entries
        if entry.auto_select is not False and entry_passes(model, entry)
    ]
    return max([0, *scores])


def _scoring_entry(model: Model, runtime: Runtime) -> int | None:
    best, index = 0, None
    for position, entry in enumerate(runtime.entries):
        if entry.auto_select is False:
            continue
        points = entry_score(model, entry, entry.effective_priority)
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


def _scorer_quirks(rows: _Rows) -> list[Finding]:
    inventory = rows.inventory
    q1, q2, q3, no_range, undefined, zero = (_Aggregate() for _ in range(6))
    entry_facts: dict[tuple[ObjectKey, ObjectKey], tuple[int, bool]] = {}
    for row in rows.rows:
        model_key = row.model
        model = inventory.models[model_key]
        for runtime_key, reason in row.manual:
            if reason.startswith(reasons.MANUAL_ZERO_SCORE) or "is not autoSelect-enabled" in reason:
                causes = _zero_score_causes(inventory.runtimes[runtime_key])
                if causes:
                    zero.add((runtime_key,), model_key, row.namespace, {"causes": causes})
        if not row.ranked:
            continue
        winner_key = row.ranked[0].key
        winner = inventory.runtimes[winner_key]
        winner_score = row.ranked[0].score
        # Q1: a namespaced winner over a cluster runtime with a higher score.
        if not winner.is_cluster:
            for item in row.ranked[1:]:
                if item.is_cluster and item.score > winner_score:
                    q1.add((winner_key, item.key), model_key, row.namespace, {"scores": [winner_score, item.score]})
        # Q2 and Q3 need more than one entry: a lone entry is the one that matched and scored.
        if len(winner.entries) > 1:
            memo_key = (model_key, winner_key)
            facts = entry_facts.get(memo_key)
            if facts is None:
                passing = [entry for entry in winner.entries if entry_passes(model, entry)]
                facts = entry_facts[memo_key] = (
                    _honest_score(model, winner),
                    not any(entry.auto_select is True for entry in passing),
                )
            honest, no_auto_match = facts
            # Q2: the winner's score comes from an entry that does not match the model.
            if winner_score > honest:
                runner_up = row.ranked[1].score if len(row.ranked) > 1 else None
                q2.add(
                    (winner_key,),
                    model_key,
                    row.namespace,
                    {
                        "score": winner_score,
                        "matchingEntriesScore": honest,
                        "scoringEntry": _scoring_entry(model, winner),
                        "runnerUpScore": runner_up,
                        "decidesPick": runner_up is not None and runner_up >= honest,
                    },
                )
            # Q3: auto-selected although no matching entry has autoSelect: true.
            if no_auto_match:
                q3.add((winner_key,), model_key, row.namespace, {"matchedEntry": row.ranked[0].entry or 0})
        # Q16: size tie-breaks among runtimes of the winner's scope with the same score.
        size = rows.size(model_key)
        if size is None:
            continue
        for item in row.ranked[1:]:
            key = item.key
            other = inventory.runtimes[key]
            if other.is_cluster != winner.is_cluster or item.score != winner_score:
                continue
            if winner.size_range is None and other.size_range is not None:
                no_range.add(
                    (winner_key, key),
                    model_key,
                    row.namespace,
                    {"range": other.size_range.describe(), "size": model.size},
                )
            elif winner.size_range is not None and other.size_range is not None:
                gap = size_score(size, winner) - size_score(size, other)
                if gap != 0 and int(gap) == 0:
                    undefined.add((winner_key, key), model_key, row.namespace, {"size": model.size})
    findings = []
    for runtimes in sorted(q1.models):
        findings.append(
            _aggregate_finding(
                "warning",
                "namespace-beats-higher-score",
                f"{key_text(runtimes[0])} (namespaced) is picked over {key_text(runtimes[1])}, which scores higher, "
                f"because OME ranks every ServingRuntime of the namespace before any ClusterServingRuntime (Q1)",
                runtimes,
                q1,
            )
        )
    for runtimes in sorted(q2.models):
        decides = any(detail["decidesPick"] for detail in q2.details[runtimes])
        findings.append(
            _aggregate_finding(
                "warning",
                "score-from-unmatched-entry",
                f"{key_text(runtimes[0])} wins with a score taken from an entry that does not match the model "
                "(OME scores every entry not autoSelect: false, Q2)"
                + ("; without it another runtime would win or tie" if decides else ""),
                runtimes,
                q2,
            )
        )
    for runtimes in sorted(q3.models):
        findings.append(
            _aggregate_finding(
                "warning",
                "auto-selected-via-other-entry",
                f"{key_text(runtimes[0])} is auto-selected although the entries that match have no autoSelect: true; "
                "another entry's autoSelect makes the whole runtime auto-selectable (Q3)",
                runtimes,
                q3,
            )
        )
    for runtimes in sorted(no_range.models):
        findings.append(
            _aggregate_finding(
                "info",
                "no-range-wins-size-tiebreak",
                f"{key_text(runtimes[0])} has no modelSizeRange and so wins the size tie-break against "
                f"{key_text(runtimes[1])}, whose range fits the model (Q16)",
                runtimes,
                no_range,
            )
        )
    for runtimes in sorted(undefined.models):
        findings.append(
            _aggregate_finding(
                "warning",
                "size-tiebreak-undefined",
                f"{key_text(runtimes[0])} and {key_text(runtimes[1])} tie on score and their size scores differ by "
                "less than 1, which OME truncates to a tie that skips the name order: OME's pick is undefined (Q16)",
                runtimes,
                undefined,
            )
        )
    for runtimes in sorted(zero.models):
        causes = sorted({cause for detail in zero.details[runtimes] for cause in detail["causes"]})  # type: ignore[attr-defined]
        findings.append(
            _aggregate_finding(
                "warning",
                "zero-score",
                f"{key_text(runtimes[0])} matches models and has autoSelect: true, but scores 0 ({'; '.join(causes)}), "
                "so OME never auto-selects it",
                runtimes,
                zero,
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
        f"{message}: {_names(models)}",
        runtimes=list(runtimes),
        models=models,
        namespaces=sorted(aggregate.namespaces[runtimes]),
        details={"rows": aggregate.details[runtimes][:_MODEL_LIST_LIMIT]},
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


# --------------------------------------------------------------------------------------------
# (e) the runtime alone


def _size_bound_unparsable(text: str) -> bool:
    number = text[:-1] if text.endswith(("T", "B", "M")) else text
    value = go_parse_float(number)
    return value is None


def _static(runtime: Runtime) -> list[Finding]:
    key = runtime.key
    name = key_text(key)
    found = []

    def add(severity: str, code: str, message: str, **details: object) -> None:
        found.append(Finding(severity, code, f"{name}: {message}", runtimes=[key], details=dict(details)))

    if not runtime.entries:
        add("error", "no-supported-formats", "no supportedModelFormats: it matches no model")
    size_range = runtime.size_range
    if size_range is not None:
        if size_range.min_text is None and size_range.max_text is None:
            add(
                "warning",
                "empty-size-range",
                "modelSizeRange sets neither min nor max: OME since v1.3 admits every size, older OME dereferences "
                "the missing bounds and crashes on any model with a size (Q22)",
            )
        elif size_range.min_text is None or size_range.max_text is None:
            missing = "min" if size_range.min_text is None else "max"
            add(
                "warning",
                "half-open-size-range",
                f"modelSizeRange has no {missing}: OME since v1.3 treats it as open ({size_range.describe()}), "
                "older OME (v1.2.x) crashes with a nil-pointer panic on any model with a size (Q22); set both bounds",
                range=size_range.to_dict(),
            )
        for bound, text in (("min", size_range.min_text), ("max", size_range.max_text)):
            if text is not None and _size_bound_unparsable(text):
                add(
                    "warning",
                    "unparsable-size-bound",
                    f"modelSizeRange.{bound} {text!r} does not parse (a number with an upper-case T, B or M), "
                    "so OME reads it as 0",
                    bound=bound,
                    value=text,
                )
        low, high = size_range.min_value, size_range.max_value
        if low is not None and high is not None and low > high:
            add(
                "error",
                "inverted-size-range",
                f"modelSizeRange min {size_range.min_text} is above max {size_range.max_text}: "
                "every model with a size is rejected",
                range=size_range.to_dict(),
            )
    for index, entry in enumerate(runtime.entries):
        where = f"supportedModelFormats[{index}]"
        if entry.format is None:
            add("error", "entry-without-format", f"{where} has no modelFormat and never matches (Q23)", entry=index)
        refs: list[tuple[str, FormatRef | None]] = [("modelFormat", entry.format), ("modelFramework", entry.framework)]
        for label, ref in refs:
            if ref is None:
                continue
            problem = operator_problem(ref.operator)
            if problem:
                add("warning", "unknown-operator", f"{where}.{label}.operator: {problem}", entry=index, field=label)
            if ref.version is not None:
                problem = version_problem(ref.version)
                if problem:
                    add(
                        "warning",
                        "unparsable-version",
                        f"{where}.{label}.version {ref.version!r} does not parse ({problem}): the entry matches no "
                        "model that has a version, and rejects models without one",
                        entry=index,
                        field=label,
                    )
            if ref.weight < 0:
                add(
                    "warning",
                    "negative-weight",
                    f"{where}.{label}.weight is {ref.weight}: negative weights lower the score, and a score of 0 "
                    "or below is never auto-selected",
                    entry=index,
                    field=label,
                )
        if entry.priority is not None and entry.priority < 1:
            add(
                "warning",
                "priority-below-1",
                f"{where}.priority is {entry.priority}: the CRD requires at least 1 and the entry scores 0 or below",
                entry=index,
            )
        if entry.pipeline is not None and entry.pipeline.to_dict() == {}:
            add(
                "info",
                "empty-pipeline-requirement",
                f"{where}.diffusionPipeline is {{}}: it still rejects every model without a recorded pipeline, "
                "including pvc:// and vendor:// models and every LLM (Q10)",
                entry=index,
            )
    return found


# --------------------------------------------------------------------------------------------
# Entry points


def lint_inventory(inventory: Inventory, *, cluster_name: str = "") -> LintReport:
    """Every finding for an Inventory."""
    indexed = _Rows(inventory)
    findings: list[Finding] = []
    for runtime in inventory.runtimes.values():
        findings += _static(runtime)
    findings += _shadowed(indexed)
    candidates = CandidateIndex(inventory.models)
    findings += _matches_nothing(indexed, candidates)
    findings += _pipeline_would_exclude(indexed)
    findings += _pipeline_missing_on_model(inventory, candidates)
    findings += _scorer_quirks(indexed)
    findings.sort(key=Finding.sort_key)
    return LintReport(cluster=cluster_name, findings=findings)
