"""Policy outcomes as a reader sees them, in the formats of `matching.reporting` (text, JSON,
Markdown, JUnit), and the exit code: 1 when an error-severity assertion fails.

A section is one evaluation (a tree, HEAD of a diff, a cluster). With a base (a diff, a check
against a cluster) each failure says whether it is new, and which changed objects it involves.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..junit import _clean
from ..keys import key_text
from ..report import md, short
from ..types import ObjectKey
from .evaluate import Failure, Outcome


@dataclass(frozen=True)
class PolicySection:
    title: str
    outcomes: Sequence[Outcome]
    base: Sequence[Outcome] | None = None
    changed: frozenset[ObjectKey] = field(default_factory=frozenset)
    behaviour: str = ""
    """The OME profile that judged the verdicts the assertions read ("" when the caller says it elsewhere)."""

    def _base_subjects(self, outcome: Outcome) -> set[str]:
        for old in self.base or ():
            if old.assertion.ident == outcome.assertion.ident:
                return {failure.subject for failure in old.failures}
        return set()

    def change(self, outcome: Outcome, failure: Failure) -> str | None:
        """ "new in HEAD" or "already failing in BASE"; None without a base."""
        if self.base is None:
            return None
        return "already failing in BASE" if failure.subject in self._base_subjects(outcome) else "new in HEAD"

    def broken_by(self, failure: Failure) -> list[ObjectKey]:
        return sorted(set(failure.objects) & self.changed)

    def fixed(self, outcome: Outcome) -> list[str]:
        """Subjects that failed in the base and pass now."""
        return sorted(self._base_subjects(outcome) - {failure.subject for failure in outcome.failures})

    def failure_dict(self, outcome: Outcome, failure: Failure) -> dict[str, object]:
        return {**failure.to_dict(), "change": self.change(outcome, failure),
                "brokenBy": [key_text(key) for key in self.broken_by(failure)]}  # fmt: skip


def exit_code(sections: Sequence[PolicySection]) -> int:
    return 1 if any(outcome.blocking for section in sections for outcome in section.outcomes) else 0


def summary(sections: Sequence[PolicySection]) -> str:
    outcomes = [outcome for section in sections for outcome in section.outcomes]
    failing = [outcome for outcome in outcomes if not outcome.passed]
    errors = sum(1 for outcome in failing if outcome.blocking)
    verdict = "FAILED" if errors else "OK"
    return (
        f"Policies {verdict}: {len(outcomes)} assertion(s) evaluated, {len(failing)} failing "
        f"({errors} error, {len(failing) - errors} warning)."
    )


def _headline(outcome: Outcome) -> str:
    assertion = outcome.assertion
    state = "PASS" if outcome.passed else "FAIL"
    text = f"{state} [{assertion.severity}] {assertion.ident} ({assertion.kind}, {outcome.checked} checked)"
    return text + (f": {outcome.note}" if outcome.note else "")


def _failure_lines(section: PolicySection, outcome: Outcome, failure: Failure) -> list[str]:
    lines = [failure.message]
    if failure.reason:
        lines.append(f"OME's reason: {short(failure.reason)}")
    change = section.change(outcome, failure)
    if change:
        broken = section.broken_by(failure)
        lines.append(change + (f"; changed: {', '.join(key_text(key) for key in broken)}" if broken else ""))
    return lines


def _owner_line(outcome: Outcome) -> str | None:
    assertion = outcome.assertion
    parts = [part for part in (assertion.description, assertion.owner and f"owner: {assertion.owner}") if part]
    return " - ".join(parts) or None


def text_report(sections: Sequence[PolicySection]) -> str:
    lines: list[str] = []
    for section in sections:
        lines.append(f"== policies: {section.title}")
        if section.behaviour:
            lines.append(f"Judged as OME {section.behaviour}.")
        for outcome in section.outcomes:
            lines.append(_headline(outcome))
            if not outcome.passed and _owner_line(outcome):
                lines.append(f"  {_owner_line(outcome)}")
            for failure in outcome.failures:
                first, *rest = _failure_lines(section, outcome, failure)
                lines += [f"  - {first}", *(f"    {line}" for line in rest)]
            lines += [f"  fixed: {subject}" for subject in section.fixed(outcome)]
        lines.append("")
    lines.append(summary(sections))
    return "\n".join(lines) + "\n"


def json_report(sections: Sequence[PolicySection]) -> dict[str, object]:
    return {
        "sections": [
            {
                "title": section.title,
                "behaviour": section.behaviour or None,
                "assertions": [
                    {
                        **outcome.to_dict(),
                        "failures": [section.failure_dict(outcome, failure) for failure in outcome.failures],
                        "fixed": section.fixed(outcome),
                    }
                    for outcome in section.outcomes
                ],
            }
            for section in sections
        ],
        "failed": bool(exit_code(sections)),
        "summary": summary(sections),
    }


def markdown_report(sections: Sequence[PolicySection], *, limit: int = 20) -> str:
    icon = "❌" if exit_code(sections) else "✅"
    lines = [f"### {icon} OME policies: {md(summary(sections))}", ""]
    for section in sections:
        judged = [f"Judged as OME {md(section.behaviour)}.", ""] if section.behaviour else []
        lines += [
            f"#### {md(section.title)}",
            "",
            *judged,
            "| assertion | kind | severity | result |",
            "|---|---|---|---|",
        ]
        for outcome in section.outcomes:
            result = "pass" if outcome.passed else f"**{len(outcome.failures)} failing**"
            assertion = outcome.assertion
            lines.append(f"| {md(assertion.ident)} | {assertion.kind} | {assertion.severity} | {result} |")
        for outcome in section.outcomes:
            if outcome.passed:
                continue
            lines += ["", f"<details open><summary>{md(outcome.assertion.ident)}</summary>", ""]
            if _owner_line(outcome):
                lines += [md(str(_owner_line(outcome))), ""]
            for failure in outcome.failures[:limit]:
                lines.append("- " + "<br>".join(md(line) for line in _failure_lines(section, outcome, failure)))
            if len(outcome.failures) > limit:
                lines.append(f"- … and {len(outcome.failures) - limit} more (see the JSON report)")
            lines += ["", "</details>"]
        lines.append("")
    return "\n".join(lines) + "\n"


def junit_suites(sections: Sequence[PolicySection]) -> list[ET.Element]:
    """One test suite per section, one case per assertion; an error-severity failure is a
    JUnit failure, a warning's failures are printed only."""
    suites = []
    for section in sections:
        suite = ET.Element(
            "testsuite",
            name=_clean(f"policies: {section.title}"),
            tests=str(max(len(section.outcomes), 1)),
            failures=str(sum(1 for outcome in section.outcomes if outcome.blocking)),
        )
        for outcome in section.outcomes:
            case = ET.SubElement(
                suite, "testcase", classname=_clean(outcome.assertion.policy), name=_clean(outcome.assertion.name)
            )
            text = _clean("\n".join(line for f in outcome.failures for line in _failure_lines(section, outcome, f)))
            if outcome.blocking:
                failure = ET.SubElement(
                    case, "failure", type=outcome.assertion.kind, message=_clean(_headline(outcome))
                )
                failure.text = text
            else:
                ET.SubElement(case, "system-out").text = _clean(_headline(outcome)) + ("\n" + text if text else "")
        suites.append(suite)
    return suites


def junit_report(sections: Sequence[PolicySection]) -> str:
    root = ET.Element("testsuites", name="ome-policies")
    root.extend(junit_suites(sections))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def render(sections: Sequence[PolicySection], fmt: str) -> str:
    """The report as one of matching.reporting.FORMATS."""
    import json

    if fmt == "json":
        return json.dumps(json_report(sections), indent=2) + "\n"
    if fmt == "markdown":
        return markdown_report(sections)
    if fmt == "junit":
        return junit_report(sections)
    return text_report(sections)
