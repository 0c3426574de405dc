"""Findings grouped by root cause: one group per thing to fix, whatever the number of findings
it causes. A runtime without modelSizeRange that wins OME's size tie-break against the
purpose-built runtimes of many models is one group (its no-range findings and the shadowed
findings it causes), not one finding per outranked runtime.

Each group has a stable `key` (what an acknowledgement names), a `signature` of its findings
(an acknowledgement covers the group as it was), and, where the lint can work one out, a `Fix`
to evaluate in the what-if.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from matching import ObjectKey, key_dict, key_text, model_size_value

from .fixes import Fix
from .quirks import quirks_in
from .report import SEVERITIES, Finding
from .selections import Rows

if TYPE_CHECKING:
    from .proofs import Proof

_RANK = {name: rank for rank, name in enumerate(SEVERITIES)}
# Findings that name one runtime and may repeat per entry or field: one group per runtime.
_PER_RUNTIME = {
    "unknown-operator",
    "unparsable-version",
    "unparsable-size-bound",
    "entry-without-format",
    "empty-pipeline-requirement",
}
# Root causes shared by several codes (the shadowed runtimes a winner's quirk causes).
NO_SIZE_RANGE = "no-size-range"
NAMESPACE_FIRST = "namespace-first"
# Negative weights or priorities below 1: the findings about the values and the zero score they give.
SCORE_INPUTS = "score-inputs"
_SCORE_CODES = {"negative-weight", "priority-below-1", "zero-score"}


@dataclass(frozen=True)
class FindingGroup:
    key: str
    cause: str
    severity: str
    title: str
    findings: list[Finding]
    runtimes: list[ObjectKey]
    models: list[ObjectKey]
    fix: Fix | None
    no_fix: str
    proof: Proof | None = None
    """What the what-if finds for the fix alone (proofs.py); None before it is proven."""
    pair: Proof | None = None
    """The what-if of the fix together with `partner`, another group's fix that it interacts with."""
    partner: Fix | None = None
    alternative: Fix | None = None
    """Another fix a person might make instead (a priority where a runtime loses on score)."""
    alternative_proof: Proof | None = None
    dedicated: str = ""
    """Why its first runtime is dedicated to one model (matching.Dedication); "" for a generic one."""

    @property
    def count(self) -> int:
        return len(self.findings)

    @property
    def signature(self) -> str:
        text = "\n".join(sorted(finding.message for finding in self.findings))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    @property
    def quirks(self) -> list[tuple[str, str]]:
        return quirks_in(" ".join([self.title, *(finding.message for finding in self.findings)]))

    def to_dict(self) -> dict[str, object]:
        return {
            "key": self.key,
            "cause": self.cause,
            "severity": self.severity,
            "title": self.title,
            "count": self.count,
            "signature": self.signature,
            "runtimes": [key_dict(key) for key in self.runtimes],
            "models": [key_dict(key) for key in self.models],
            "quirks": [{"code": code, "meaning": text} for code, text in self.quirks],
            "fix": self.fix.to_dict() if self.fix is not None else None,
            "proof": self.proof.to_dict() if self.proof is not None else None,
            "alternative": None
            if self.alternative is None
            else {
                "fix": self.alternative.to_dict(),
                "proof": None if self.alternative_proof is None else self.alternative_proof.to_dict(),
            },
            "together": None
            if self.pair is None or self.partner is None
            else {"fix": self.partner.to_dict(), "proof": self.pair.to_dict()},
            "no_fix": self.no_fix or None,
            "dedicated": self.dedicated or None,
            "findings": [finding.to_dict() for finding in self.findings],
        }


def _single_winner(finding: Finding, why: str) -> ObjectKey | None:
    beaten = finding.details.get("beaten_by") or []
    if len(beaten) == 1 and beaten[0]["why"] == [why]:
        runtime = beaten[0]["runtime"]
        return (runtime["kind"], runtime["namespace"], runtime["name"])
    return None


def root_cause(finding: Finding) -> tuple[str, tuple[ObjectKey, ...]]:
    """(cause, runtimes): the same for every finding one change would remove."""
    code = finding.code
    if code == "no-range-wins-size-tiebreak":
        return NO_SIZE_RANGE, (finding.runtimes[0],)
    if code == "namespace-beats-higher-score":
        return NAMESPACE_FIRST, (finding.runtimes[0],)
    if code == "shadowed":
        for cause, why in ((NO_SIZE_RANGE, "no-range-wins"), (NAMESPACE_FIRST, "namespace-first")):
            winner = _single_winner(finding, why)
            if winner is not None:
                return cause, (winner,)
        return code, (finding.runtimes[0],)
    if code in _SCORE_CODES:
        return SCORE_INPUTS, (finding.runtimes[0],)
    if code in _PER_RUNTIME:
        return code, (finding.runtimes[0],)
    return code, tuple(finding.runtimes)


def group_findings(findings: Iterable[Finding], rows: Rows) -> list[FindingGroup]:
    grouped: dict[tuple[str, tuple[ObjectKey, ...]], list[Finding]] = {}
    for finding in findings:
        grouped.setdefault(root_cause(finding), []).append(finding)
    groups = [_group(cause, runtimes, members, rows) for (cause, runtimes), members in grouped.items()]
    groups.sort(key=lambda group: (_RANK[group.severity], -group.count, group.cause, group.key))
    return groups


def _group(cause: str, runtimes: tuple[ObjectKey, ...], members: list[Finding], rows: Rows) -> FindingGroup:
    severity = min((finding.severity for finding in members), key=_RANK.__getitem__)
    models = sorted({model for finding in members for model in finding.models})
    involved = sorted({runtime for finding in members for runtime in finding.runtimes} - set(runtimes))
    fix, no_fix = _fix(cause, runtimes, members, rows)
    alternative = _priority_fix(runtimes[0], rows) if cause == "shadowed" else None
    return FindingGroup(
        key=f"{cause}:{'|'.join(key_text(runtime) for runtime in runtimes)}",
        cause=cause,
        severity=severity,
        title=_title(cause, runtimes, members, models, involved),
        findings=members,
        runtimes=[*runtimes, *involved],
        models=models,
        fix=fix,
        no_fix=no_fix,
        alternative=alternative,
        dedicated=_dedicated(runtimes[0], rows),
    )


def _dedicated(runtime: ObjectKey, rows: Rows) -> str:
    found = rows.inventory.runtimes.get(runtime)
    return "" if found is None or found.dedication is None else found.dedication.describe()


def _title(
    cause: str,
    runtimes: tuple[ObjectKey, ...],
    members: list[Finding],
    models: list[ObjectKey],
    involved: list[ObjectKey],
) -> str:
    if cause == NO_SIZE_RANGE:
        return (
            f"{key_text(runtimes[0])} has no modelSizeRange, so on equal scores OME's size tie-break picks it over "
            f"{len(involved)} runtime(s) whose range fits the model, for {len(models)} model(s) (Q16)"
        )
    if cause == NAMESPACE_FIRST:
        return (
            f"{key_text(runtimes[0])} is a ServingRuntime, so OME ranks it before {len(involved)} "
            f"ClusterServingRuntime(s) that score higher, for {len(models)} model(s) (Q1)"
        )
    if len(members) == 1:
        return members[0].message
    return f"{key_text(runtimes[0])}: {len(members)} {cause} findings"


def _sizes(keys: Iterable[ObjectKey], rows: Rows) -> list[tuple[float, str]]:
    found = []
    for key in keys:
        model = rows.inventory.models[key]
        value = model_size_value(model)
        if model.size and value:
            found.append((value, model.size))
    return sorted(found)


def _own_models(runtime: ObjectKey, rows: Rows) -> list[ObjectKey]:
    """The models of the inventory a dedicated runtime was written for (matching.Dedication)."""
    found = rows.inventory.runtimes[runtime]
    if found.dedication is None:
        return []
    return sorted(key for key, model in rows.inventory.models.items() if not found.serves_as_other(model))


def _range_fix(runtime: ObjectKey, rows: Rows) -> tuple[Fix | None, str]:
    """A modelSizeRange over the sizes of the models the runtime is picked for: it keeps them
    where it is the only match, and on a tie the narrower ranges of purpose-built runtimes win.
    A runtime dedicated to a model gets that model's size: the others it is picked for are
    served under that model's name today."""
    own = _sizes(_own_models(runtime, rows), rows)
    if own:
        low, high = own[0][1], own[-1][1]
        summary = f"set modelSizeRange {{min: {low}, max: {high}}} (the size of the model it is dedicated to, Q16)"
        return Fix(runtime, summary, patch={"spec": {"modelSizeRange": {"min": low, "max": high}}}), ""
    sizes = _sizes({item.model for item in rows.ranked.get(runtime, ()) if item.rank == 0}, rows)
    if not sizes:
        return None, "no model it is picked for has a size: set a modelSizeRange that fits the models it is meant for"
    low, high = sizes[0][1], sizes[-1][1]
    summary = f"set modelSizeRange {{min: {low}, max: {high}}} (the sizes of the models it is picked for, Q16)"
    return Fix(runtime, summary, patch={"spec": {"modelSizeRange": {"min": low, "max": high}}}), ""


def _fix(cause: str, runtimes: tuple[ObjectKey, ...], members: list[Finding], rows: Rows) -> tuple[Fix | None, str]:
    runtime = runtimes[0]
    if cause == NO_SIZE_RANGE:
        return _range_fix(runtime, rows)
    if cause == "shadowed" and rows.inventory.runtimes[runtime].size_range is None and _own_models(runtime, rows):
        return _range_fix(runtime, rows)  # dedicated to a model of the cluster: keep it, for that model
    if cause in ("shadowed", "matches-no-model"):
        summary = "disable it (OME picks it for no model today)"
        return Fix(runtime, summary, patch={"spec": {"disabled": True}}), ""
    if cause == "half-open-size-range":
        return _half_open_fix(runtime, rows)
    if cause == SCORE_INPUTS:
        return _score_fix(runtime, rows), ""
    static = _static_fix(cause, runtime, members, rows)
    if static is not None:
        return static, ""
    if cause == "pipeline-missing-on-model":
        return _pipeline_fix(runtime, members), ""
    return None, "no single change can be worked out for this one: see the findings for what to change"


def _priority_fix(runtime: ObjectKey, rows: Rows) -> Fix | None:
    """For a runtime that loses only on score, in its own scope kind: the priority each of its
    matching entries needs to outscore every runtime that beats it (OME multiplies the entry's
    weights by its priority, spec 4.1). None when it loses for another reason."""
    found = rows.inventory.runtimes[runtime]
    needed: dict[int, int] = {}
    for item in rows.ranked.get(runtime, ()):
        winner = item.row.ranked[0]
        same_kind = rows.inventory.runtimes[winner.key].is_cluster == found.is_cluster
        if not same_kind or item.score <= 0 or winner.score <= item.score:
            return None
        priority = found.entries[item.entry].effective_priority
        needed[item.entry] = max(needed.get(item.entry, 0), winner.score * priority // item.score + 1)
    if not needed:
        return None
    words = ", ".join(f"entry {index} to {value}" for index, value in sorted(needed.items()))
    summary = f"raise the priority of {words} (above the scores of the runtimes that beat it)"
    return Fix(runtime, summary, entries={index: {"priority": value} for index, value in needed.items()})


def _entries_of(members: list[Finding], name: str) -> list[int]:
    found = {finding.details.get(name) for finding in members}
    found |= {row.get(name) for finding in members for row in finding.details.get("rows", [])}
    return sorted(index for index in found if isinstance(index, int))


def _static_fix(cause: str, runtime: ObjectKey, members: list[Finding], rows: Rows) -> Fix | None:
    """Fixes that follow from the runtime's own values."""
    size_range = rows.inventory.runtimes[runtime].size_range
    if cause == "empty-size-range":
        return Fix(runtime, "remove the empty modelSizeRange", patch={"spec": {"modelSizeRange": None}})
    if cause == "inverted-size-range" and size_range is not None:
        swapped = {"min": size_range.max_text, "max": size_range.min_text}
        return Fix(
            runtime,
            f"swap the bounds: modelSizeRange {{min: {swapped['min']}, max: {swapped['max']}}}",
            patch={"spec": {"modelSizeRange": swapped}},
        )
    if cause == "empty-pipeline-requirement":
        entries = _entries_of(members, "entry")
        summary = f"remove the empty diffusionPipeline of entr{'ies' if len(entries) > 1 else 'y'} {', '.join(map(str, entries))}"
        return Fix(runtime, summary, entries={index: {"diffusionPipeline": None} for index in entries})
    if cause == "score-from-unmatched-entry":
        entries = _entries_of(members, "scoring_entry")
        summary = (
            f"set autoSelect: false on entr{'ies' if len(entries) > 1 else 'y'} {', '.join(map(str, entries))}, "
            "whose score counts for models it does not match (Q2)"
        )
        return Fix(runtime, summary, entries={index: {"autoSelect": False} for index in entries}) if entries else None
    return None


def _pipeline_fix(runtime: ObjectKey, members: list[Finding]) -> Fix:
    """The models' diffusionPipeline merge patches (what the patch button applies one by one),
    all in one what-if."""
    others = {}
    for finding in members:
        for item in finding.details.get("patches", []):
            model = item["model"]
            others[(model["kind"], model["namespace"], model["name"])] = item["patch"]
    summary = f"patch the diffusionPipeline of {len(others)} model(s) (each has its patch button on its cell)"
    return Fix(runtime, summary, others=others)


def _half_open_fix(runtime: ObjectKey, rows: Rows) -> tuple[Fix | None, str]:
    size_range = rows.inventory.runtimes[runtime].size_range
    sizes = _sizes(rows.matched_models(runtime), rows)
    if size_range is None or not sizes:
        return None, "no model it matches has a size: set the missing bound by hand"
    bound = {"min": size_range.min_text or sizes[0][1], "max": size_range.max_text or sizes[-1][1]}
    summary = f"set both bounds: modelSizeRange {{min: {bound['min']}, max: {bound['max']}}}"
    return Fix(runtime, summary, patch={"spec": {"modelSizeRange": bound}}), ""


def _score_fix(runtime: ObjectKey, rows: Rows) -> Fix:
    """Weights below 0 back to the CRD default 1, priorities below 1 to 1."""
    entries: dict[int, dict[str, object]] = {}
    for index, entry in enumerate(rows.inventory.runtimes[runtime].entries):
        values: dict[str, object] = {}
        for label, ref in (("modelFormat", entry.format), ("modelFramework", entry.framework)):
            if ref is not None and ref.weight < 0:
                values[f"{label}.weight"] = 1
        if entry.priority is not None and entry.priority < 1:
            values["priority"] = 1
        if values:
            entries[index] = values
    return Fix(runtime, "set negative weights to 1 (the CRD default) and priorities below 1 to 1", entries=entries)
