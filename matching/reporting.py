"""One report in every format, and the command-line options and output shared by
`ome-compat diff` and `manage.py whatif`: text (default), `--json`, `--markdown` (its places
linked to their lines with `--link URL`), `--junit FILE` and `--sarif FILE` (written besides
the printed format), `--fail-on CONDITIONS`.

Exit codes: 0 when no `--fail-on` condition occurs, 1 when one does, 2 for bad input.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from .behaviour import BEHAVIOURS, DEFAULT_BEHAVIOUR, as_behaviour, behaviour_names
from .diff_results import CONDITIONS
from .junit import junit_report
from .report import Section, Verdict, json_report, markdown_report, parse_conditions, text_report, verdict
from .sarif import sarif_report

FORMATS = ("text", "json", "markdown", "junit", "sarif")
EXIT_BAD_INPUT = 2


def render(sections: Sequence[Section], result: Verdict, fmt: str, *, link: str | None = None) -> str:
    """The report as `fmt` (one of FORMATS); Markdown links places to their lines under `link`."""
    if fmt == "json":
        return json.dumps(json_report(sections, result), indent=2) + "\n"
    if fmt == "markdown":
        return markdown_report(sections, result, link=link)
    if fmt == "junit":
        return junit_report(sections, result)
    if fmt == "sarif":
        return sarif_report(sections, result)
    return text_report(sections, result)


def add_report_options(parser: argparse.ArgumentParser) -> None:
    add_format_options(parser)
    parser.add_argument("--sarif", metavar="FILE", help="also write a SARIF 2.1.0 report to FILE")
    parser.add_argument(
        "--link",
        metavar="URL",
        help="--markdown links each finding to its manifest line under this prefix, e.g. "
        "https://github.com/OWNER/REPO/blob/SHA/ (paths as given, relative to the repository's root)",
    )
    parser.add_argument(
        "--fail-on",
        metavar="CONDITIONS",
        default="",
        help="comma-separated; exit 1 when one occurs: " + "; ".join(f"{k}: {v}" for k, v in CONDITIONS.items()),
    )


def add_lenient_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--lenient",
        action="store_true",
        help="report fields OME's CRD schemas do not declare, wrong types and values outside an enum as "
        "warnings, not errors (for trees that carry fields of another OME version)",
    )


def profile_name(text: str) -> str:
    """The `--behaviour` value: the profile named, or the one a release name resolves to."""
    try:
        return as_behaviour(text).name
    except ValueError:
        raise argparse.ArgumentTypeError(f"unknown profile {text!r}; known: {behaviour_names()}") from None


def add_behaviour_option(command: argparse.ArgumentParser) -> None:
    """--behaviour NAME: a profile or a release name (`v1.2.2`), default DEFAULT_BEHAVIOUR."""
    command.add_argument(
        "--behaviour",
        metavar="NAME",
        type=profile_name,
        default=DEFAULT_BEHAVIOUR,
        help=f"the OME whose rules judge the files, a profile or a release (default {DEFAULT_BEHAVIOUR}): "
        + "; ".join(f"{name}: {profile.summary}" for name, profile in BEHAVIOURS.items())
        + f"; releases: {behaviour_names()}",
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
    """Print the report, write the JUnit and SARIF files, and return the exit code. OSError
    naming the option and the file when a file cannot be written."""
    result = verdict(sections, fail_on_of(args))
    out.write(render(sections, result, args.format, link=args.link))
    for fmt in ("junit", "sarif"):
        path = getattr(args, fmt)
        if not path:
            continue
        try:
            Path(path).write_text(render(sections, result, fmt), encoding="utf-8")
        except OSError as error:
            raise OSError(f"--{fmt} {path}: cannot write: {error.strerror or error}") from error
    return result.exit_code
