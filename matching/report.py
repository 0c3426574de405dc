"""A `Diff` as a reader sees it: plain text for a terminal or CI log, Markdown for a pull-request
comment, and the verdict against `--fail-on` conditions.

A report has sections, one per comparison (one for two trees, one per cluster for the what-if
of a cluster fleet). Texts that came from manifests are escaped for Markdown; OME's long
NoRuntimeFoundError texts are shortened (the JSON output has them whole).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .diff_results import CONDITIONS, Diff, DiffCell, DiffIsvc, DiffRow, key_label
from .types import ObjectKey

MAX_REASON = 300
Section = tuple[str, Diff]
"""(title, diff): e.g. ("base -> head", ...) or ("cluster prod-eu", ...)."""


def parse_conditions(text: str) -> frozenset[str]:
    """`lost-runtime,isvc-rejected` -> the set; ValueError naming an unknown condition."""
    names = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = sorted(names - set(CONDITIONS))
    if unknown:
        raise ValueError(f"--fail-on: unknown condition {unknown[0]!r}; known: {', '.join(CONDITIONS)}")
    return names


@dataclass(frozen=True)
class Verdict:
    """Which of the `fail_on` conditions occur, with counts, over all sections."""

    fail_on: frozenset[str]
    found: dict[str, int]

    @property
    def failed(self) -> bool:
        return bool(self.found)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def line(self) -> str:
        if not self.fail_on:
            return "No --fail-on conditions given."
        if not self.failed:
            return f"OK: none of {', '.join(sorted(self.fail_on))} occurs."
        return "FAILED: " + ", ".join(f"{name} ({count})" for name, count in sorted(self.found.items()))


def verdict(sections: Iterable[Section], fail_on: frozenset[str]) -> Verdict:
    found: dict[str, int] = {}
    for _title, diff in sections:
        for name, count in diff.counts().items():
            if name in fail_on:
                found[name] = found.get(name, 0) + count
    return Verdict(fail_on, found)


def short(text: str | None, limit: int = MAX_REASON) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _pick(key: ObjectKey | None, score: int | None) -> str:
    return "none" if key is None else f"{key_label(key)} (score {score})"


def _cell_line(cell: DiffCell) -> str:
    def side(status: str | None, points: int | None) -> str:
        return (status or "absent") + ("" if points is None else f" ({points})")

    text = (
        f"{key_label(cell.runtime)}: {side(cell.old_status, cell.old_score)} -> {side(cell.new_status, cell.new_score)}"
    )
    return text + (f": {short(cell.reason)}" if cell.reason else "")


def row_line(row: DiffRow) -> str:
    text = f"{row.title}: {_pick(row.old_pick, row.old_score)} -> {_pick(row.new_pick, row.new_score)}"
    if row.old_outcome != row.new_outcome:
        text += f" [{row.old_outcome or 'absent'} -> {row.new_outcome or 'absent'}]"
    why = row.reason or row.error
    return text + (f": {short(why)}" if why else "")


def isvc_line(isvc: DiffIsvc) -> str:
    def side(verdict_: str | None, runtime: ObjectKey | None) -> str:
        if verdict_ is None:
            return "absent"
        return verdict_ + ("" if runtime is None else f" ({key_label(runtime)})")

    text = f"{key_label(isvc.isvc)}: {side(isvc.old_verdict, isvc.old_runtime)} -> {side(isvc.new_verdict, isvc.new_runtime)}"
    return text + (f": {short(isvc.reason)}" if isvc.reason else "")


def groups(diff: Diff) -> list[tuple[str, list[str]]]:
    """(heading, lines) of the parts of a diff that have anything, in the order a reviewer
    reads them: losses first."""
    by = {name: [row for row in diff.rows if name in row.conditions] for name in CONDITIONS}
    cells = [f"{row.title}: {_cell_line(cell)}" for row in diff.rows for cell in row.cells]
    found = [
        ("Models that lose their runtime", [row_line(row) for row in by["lost-runtime"]]),
        ("InferenceServices OME would now reject", [isvc_line(i) for i in diff.isvcs if i.rejected]),
        ("Picks that change", [row_line(row) for row in by["pick-changed"]]),
        ("Models that gain a runtime", [row_line(row) for row in by["gained-runtime"]]),
        ("Scores that change", [row_line(row) for row in by["score-changed"]]),
        ("InferenceServices decided differently", [isvc_line(i) for i in diff.isvcs if not i.rejected]),
        ("Cells that change", cells),
    ]
    return [(heading, lines) for heading, lines in found if lines]


def _summary(diff: Diff) -> str:
    actions = {
        action: sum(1 for _key, act in diff.objects if act == action) for action in ("added", "changed", "removed")
    }
    return (
        f"objects {actions['added']} added, {actions['changed']} changed, {actions['removed']} removed; "
        f"rows {len(diff.rows)} of {diff.rows_compared} compared change, "
        f"{sum(len(row.cells) for row in diff.rows)} cells; "
        f"InferenceServices {len(diff.isvcs)} of {diff.isvcs_compared} change"
    )


def text_report(sections: Sequence[Section], result: Verdict) -> str:
    lines: list[str] = []
    for title, diff in sections:
        lines += [f"== {title}", _summary(diff)]
        parts = groups(diff)
        if not parts:
            lines.append("No change in OME's decisions.")
        for heading, items in parts:
            lines += ["", f"{heading} ({len(items)}):", *(f"  {item}" for item in items)]
        lines.append("")
    lines.append(result.line())
    return "\n".join(lines) + "\n"


# Emphasis, code, links (a bracket escaped is no link), tables, strike-through, headings.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


def md(text: str) -> str:
    """Text from manifests, safe in Markdown and in the HTML a forge renders it to."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def markdown_report(sections: Sequence[Section], result: Verdict, *, limit: int = 50) -> str:
    """For a pull-request comment: a verdict, a summary table, then each group (at most
    `limit` lines each; the rest is counted)."""
    icon = "❌" if result.failed else "✅"
    lines = [f"### {icon} OME runtime selection: {md(result.line())}", ""]
    lines += [
        "| | lost runtime | picks changed | gained | rejected services | cells changed |",
        "|---|---|---|---|---|---|",
    ]
    for title, diff in sections:
        counts = diff.counts()
        values = [counts[name] for name in ("lost-runtime", "pick-changed", "gained-runtime", "isvc-rejected")]
        values.append(sum(len(row.cells) for row in diff.rows))
        lines.append(f"| {md(title)} | " + " | ".join(str(value) for value in values) + " |")
    for title, diff in sections:
        parts = groups(diff)
        if not parts:
            continue
        lines += ["", f"#### {md(title)}", ""]
        for heading, items in parts:
            lines += [
                f"<details{' open' if heading.startswith(('Models that lose', 'InferenceServices OME')) else ''}>"
            ]
            lines += [f"<summary>{heading} ({len(items)})</summary>", ""]
            lines += [f"- {md(item)}" for item in items[:limit]]
            if len(items) > limit:
                lines.append(f"- … and {len(items) - limit} more (see the JSON report)")
            lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def json_report(sections: Sequence[Section], result: Verdict) -> dict[str, object]:
    return {
        "sections": [{"title": title, **diff.to_dict()} for title, diff in sections],
        "failOn": sorted(result.fail_on),
        "failed": result.failed,
        "found": dict(sorted(result.found.items())),
    }
