"""A report as JUnit XML, which CI systems show as test results: one test suite per section,
one test case per row or InferenceService that changes (with the `file` and `line` of the
object that caused it), failed when it has a `--fail-on` condition. A section without changes
holds one passing case, so that it is listed at all."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from .diff_results import DiffIsvc, DiffRow, Place
from .keys import key_text
from .report import Section, Verdict, isvc_line, row_line

# Characters XML 1.0 cannot hold at all (a JSON manifest can carry them in a string).
_NOT_XML = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _case(suite: ET.Element, classname: str, name: str, text: str, failing: list[str], place: Place | None) -> None:
    case = ET.SubElement(suite, "testcase", classname=_clean(classname), name=_clean(name))
    if place is not None:  # the attributes CI test views use to point at a line
        case.set("file", _clean(place.origin.file))
        if place.line is not None:
            case.set("line", str(place.line))
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
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="ome-behaviour", value=_clean(diff.behaviour))
        for row in diff.rows:
            failing = sorted(row.conditions & result.fail_on)
            _case(suite, key_text(row.model), row.scope, row_line(row), failing, row.at)
        for isvc in diff.isvcs:
            failing = sorted(isvc.conditions & result.fail_on)
            _case(suite, key_text(isvc.isvc), "decision", isvc_line(isvc), failing, isvc.at)
        if not items:
            _case(suite, "ome", "no change in OME's decisions", "no change", [], None)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
