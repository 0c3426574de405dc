"""`matching.__all__` is the library other tools call, and docs/cli.md lists exactly it; the
command line's helpers stay out of it."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import matching

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def documented() -> set[str]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## The library (`import matching`)", 1)[1].split("\n## ", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| ") and "concern" not in line)
    return set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", table))


def test_every_exported_name_is_documented_and_every_documented_name_exported() -> None:
    assert set(matching.__all__) == documented()


def test_no_export_is_a_command_line_helper() -> None:
    """By construction, not by a list: nothing exported takes or returns argparse's objects,
    and nothing exported comes from the command line's modules."""
    for name in matching.__all__:
        value = getattr(matching, name)
        assert getattr(value, "__module__", "") not in {"matching.cli", "matching.cli_diff", "matching.cli_policy"}, (
            name
        )
        if inspect.isfunction(value):
            assert "argparse" not in str(inspect.signature(value)), name


def test_the_command_line_helpers_are_not_exported() -> None:
    for helper in ("add_report_options", "add_lenient_option", "emit", "fail_on_of", "EXIT_BAD_INPUT"):
        assert not hasattr(matching, helper), helper
