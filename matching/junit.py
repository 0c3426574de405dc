"""A report as JUnit XML, which CI systems show as test results: one test suite per section,
one test case per row or InferenceService that changes, failed when it has a `--fail-on`
condition. A section without changes holds one passing case, so that it is listed at all."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from .diff_results import DiffIsvc, DiffRow
from .keys import key_text
from .report import Section, Verdict, isvc_line, row_line

# Characters XML 1.0 cannot hold at all (a JSON manifest can carry them in a string).
_NOT_XML = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _case(suite: ET.Element, classname: str, name: str, text: str, failing: list[str]) -> None:
    case = ET.SubElement(suite, "testcase", classname=_clean(classname), name=_clean(name))
    text = _clean(text)
    if failing:
        failure = ET.SubElement(case, "failure", type=",".join(failing), message=f"{', '.join(failing)}: {text}")
        failure.text = text
    else:
        ET.SubElement(case, "system-out").text = text


def junit_report(sections: Sequence[Section], result: Verdict) -> str:
    root = ET.Element("testsuites", name="ome-runtime-selection")
    for title, diff in sections:
        items: list[DiffRow | DiffIsvc] = [*diff.rows, *diff.isvcs]
        failures = sum(1 for item in items if item.conditions & result.fail_on)
        suite = ET.SubElement(
            root, "testsuite", name=_clean(title), tests=str(max(len(items), 1)), failures=str(failures)
        )
        for row in diff.rows:
            failing = sorted(row.conditions & result.fail_on)
            _case(suite, key_text(row.model), row.namespace or "cluster scope", row_line(row), failing)
        for isvc in diff.isvcs:
            _case(suite, key_text(isvc.isvc), "decision", isvc_line(isvc), sorted(isvc.conditions & result.fail_on))
        if not items:
            _case(suite, "ome", "no change in OME's decisions", "no change", [])
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
