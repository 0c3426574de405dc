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

from .diff_results import CONDITIONS, HEAD_SIDE, Diff, DiffCell, DiffIsvc, DiffRow, Place, key_label
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


Finding = tuple[str, "Place | None"]
"""One line of a report and the place of the object that caused it."""


def groups(diff: Diff) -> list[tuple[str, list[Finding]]]:
    """(heading, findings) of the parts of a diff that have anything, in the order a reviewer
    reads them: losses first."""
    by = {name: [row for row in diff.rows if name in row.conditions] for name in CONDITIONS}

    def rows(name: str) -> list[Finding]:
        return [(row_line(row), row.at) for row in by[name]]

    def isvcs(rejected: bool) -> list[Finding]:
        return [(isvc_line(i), i.at) for i in diff.isvcs if i.rejected == rejected]

    cells = [(f"{row.title}: {_cell_line(cell)}", cell.at) for row in diff.rows for cell in row.cells]
    found = [
        ("Models that lose their runtime", rows("lost-runtime")),
        ("InferenceServices OME would now reject", isvcs(True)),
        ("Picks that change", rows("pick-changed")),
        ("Models that gain a runtime", rows("gained-runtime")),
        ("Scores that change", rows("score-changed")),
        ("InferenceServices decided differently", isvcs(False)),
        ("Cells that change", cells),
    ]
    return [(heading, items) for heading, items in found if items]


def _summary(diff: Diff) -> str:
    actions = {
        action: sum(1 for _key, act in diff.objects if act == action) for action in ("added", "changed", "removed")
    }
    return (
        f"objects {actions['added']} added, {actions['changed']} changed, {actions['removed']} removed; "
        f"rows {diff.rows_changed} of {diff.rows_compared} compared change, "
        f"{diff.cells_changed} cells; "
        f"InferenceServices {len(diff.isvcs)} of {diff.isvcs_compared} change"
    )


def _at_text(place: Place | None) -> str:
    return "" if place is None else f"{place.text}: "


def text_report(sections: Sequence[Section], result: Verdict) -> str:
    lines: list[str] = []
    for title, diff in sections:
        lines += [f"== {title}", f"Judged as OME {diff.behaviour}.", _summary(diff)]
        parts = groups(diff)
        if not parts:
            lines.append("No change in OME's decisions.")
        for heading, items in parts:
            lines += ["", f"{heading} ({len(items)}):", *(f"  {_at_text(place)}{item}" for item, place in items)]
        lines.append("")
    lines.append(result.line())
    return "\n".join(lines) + "\n"


# Emphasis, code, links (a bracket escaped is no link), tables, strike-through, headings.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~#])")


def md(text: str) -> str:
    """Text from manifests, safe in Markdown and in the HTML a forge renders it to."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _at_markdown(place: Place | None, link: str | None) -> str:
    """The place as a link to its line under `link` (a URL prefix such as a forge's
    `https://host/owner/repo/blob/SHA/`) when it is in HEAD's tree, else as code."""
    if place is None:
        return ""
    if link is None or place.side != HEAD_SIDE:
        side = "" if place.side == HEAD_SIDE else f" ({place.side})"
        return f"{md(place.text)}{side}: "
    anchor = "" if place.line is None else f"#L{place.line}"
    url = link + place.uri + anchor
    return f"[{md(place.text)}]({url}): "


def markdown_report(sections: Sequence[Section], result: Verdict, *, limit: int = 50, link: str | None = None) -> str:
    """For a pull-request comment: a verdict, a summary table, then each group (at most
    `limit` lines each; the rest is counted). Each line starts with the place of the object
    that caused it, linked to its line under `link` (see `_at_markdown`)."""
    icon = "❌" if result.failed else "✅"
    lines = [f"### {icon} OME runtime selection: {md(result.line())}", ""]
    lines += [
        "| | OME profile | lost runtime | picks changed | gained | rejected services | cells changed |",
        "|---|---|---|---|---|---|---|",
    ]
    for title, diff in sections:
        counts = diff.counts()
        values = [counts[name] for name in ("lost-runtime", "pick-changed", "gained-runtime", "isvc-rejected")]
        values.append(diff.cells_changed)
        lines.append(f"| {md(title)} | {md(diff.behaviour)} | " + " | ".join(str(value) for value in values) + " |")
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
            lines += [f"- {_at_markdown(place, link)}{md(item)}" for item, place in items[:limit]]
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
