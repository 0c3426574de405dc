"""A report as SARIF 2.1.0, which code-scanning tools show on the changed lines: one rule per
`--fail-on` condition, one result per row or InferenceService that changes, at the manifest
line of the object that caused it. A result is an error when it has a `--fail-on` condition,
else a note. Places in the BASE tree only are named in the message, not located (the file is
not in the checked-out HEAD)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from ._version import __version__
from .diff_results import CONDITIONS, HEAD_SIDE, DiffIsvc, DiffRow, Place
from .report import Section, Verdict, isvc_line, row_line

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL = "ome-compat"
INFORMATION = "https://github.com/sgl-project/ome"


def _location(place: Place | None) -> list[dict[str, object]]:
    if place is None or place.side != HEAD_SIDE:
        return []
    region = {} if place.line is None else {"region": {"startLine": place.line}}
    artifact = {"artifactLocation": {"uri": place.uri}, **region}
    return [{"physicalLocation": artifact}]


def _result(title: str, item: DiffRow | DiffIsvc, text: str, fail_on: frozenset[str]) -> dict[str, object]:
    failing = sorted(item.conditions & fail_on)
    conditions = sorted(item.conditions - {"any-change"}) or ["any-change"]
    rule = failing[0] if failing else conditions[0]
    where = "" if item.at is None or item.at.side == HEAD_SIDE else f" (was at {item.at.text} in the base tree)"
    return {
        "ruleId": rule,
        "level": "error" if failing else "note",
        "message": {"text": f"{title}: {text}{where}"},
        "locations": _location(item.at),
        "properties": {"conditions": sorted(item.conditions)},
    }


def sarif_report(sections: Sequence[Section], result: Verdict) -> str:
    rules = [
        {"id": name, "shortDescription": {"text": text}, "helpUri": INFORMATION} for name, text in CONDITIONS.items()
    ]
    results = []
    for title, diff in sections:
        items: list[DiffRow | DiffIsvc] = [*diff.rows, *diff.isvcs]
        for item in items:
            text = row_line(item) if isinstance(item, DiffRow) else isvc_line(item)
            results.append(_result(title, item, text, result.fail_on))
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": TOOL, "version": __version__, "informationUri": INFORMATION, "rules": rules}
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
