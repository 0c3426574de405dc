"""One report in every format, and the command-line options and output shared by
`python -m matching diff` and `manage.py whatif`: text (default), `--json`, `--markdown`,
`--junit FILE` (written besides the printed format), `--fail-on CONDITIONS`.

Exit codes: 0 when no `--fail-on` condition occurs, 1 when one does, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from .diff_results import CONDITIONS
from .junit import junit_report
from .report import Section, Verdict, json_report, markdown_report, parse_conditions, text_report, verdict

FORMATS = ("text", "json", "markdown", "junit")
EXIT_BAD_INPUT = 2


def render(sections: Sequence[Section], result: Verdict, fmt: str) -> str:
    """The report as `fmt` (one of FORMATS)."""
    if fmt == "json":
        return json.dumps(json_report(sections, result), indent=2) + "\n"
    if fmt == "markdown":
        return markdown_report(sections, result)
    if fmt == "junit":
        return junit_report(sections, result)
    return text_report(sections, result)


def add_report_options(parser: argparse.ArgumentParser) -> None:
    add_format_options(parser)
    parser.add_argument(
        "--fail-on",
        metavar="CONDITIONS",
        default="",
        help="comma-separated; exit 1 when one occurs: " + "; ".join(f"{k}: {v}" for k, v in CONDITIONS.items()),
    )


def add_format_options(parser: argparse.ArgumentParser) -> None:
    """--json, --markdown (text otherwise) and --junit FILE."""
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", dest="format", action="store_const", const="json", help="print JSON")
    shown.add_argument("--markdown", dest="format", action="store_const", const="markdown", help="print Markdown")
    parser.set_defaults(format="text")
    parser.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")


def fail_on_of(args: argparse.Namespace) -> frozenset[str]:
    """The --fail-on conditions; ValueError naming an unknown one."""
    return parse_conditions(args.fail_on or "")


class Writer(Protocol):
    def write(self, text: str, /) -> object: ...


def emit(sections: Sequence[Section], args: argparse.Namespace, out: Writer) -> int:
    """Print the report, write the JUnit file, and return the exit code. OSError when the
    JUnit file cannot be written."""
    result = verdict(sections, fail_on_of(args))
    out.write(render(sections, result, args.format))
    if args.junit:
        Path(args.junit).write_text(render(sections, result, "junit"), encoding="utf-8")
    return result.exit_code
