"""`python -m matching diff --behaviour NAME`: both trees are judged by the named OME profile,
every format names it, and an unknown name is bad input naming the option."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import matching

from .test_diff import model, run, runtime, tree


def trees(tmp_path: Path) -> tuple[Path, Path]:
    """HEAD adds a preferred runtime whose modelSizeRange has one bound (quirk Q22): newer OME
    reads the missing bound as open and picks it; OME 17b77eda crashes on it."""
    sized = model(modelParameterSize="8B")
    base = tree(tmp_path / "base", sized, runtime("vllm"))
    head = tree(tmp_path / "head", sized, runtime("vllm"), runtime("half", priority=5, modelSizeRange={"min": "1B"}))
    return base, head


def section(result: object) -> dict[str, object]:
    sections = json.loads(result.stdout)["sections"]  # type: ignore[attr-defined]
    assert len(sections) == 1
    return sections[0]  # type: ignore[no-any-return]


def test_the_default_profile_judges_both_trees_and_is_named(tmp_path: Path) -> None:
    result = run(*trees(tmp_path), "--json", "--fail-on", "pick-changed,lost-runtime")

    assert result.returncode == 1, result.stderr
    found = section(result)
    assert found["behaviour"] == matching.DEFAULT_BEHAVIOUR == "v1.3"
    (row,) = found["rows"]  # type: ignore[misc]
    assert (row["oldPick"]["name"], row["newPick"]["name"]) == ("vllm", "half")
    assert json.loads(result.stdout)["found"] == {"pick-changed": 1}


def test_17b77eda_judges_the_same_change_as_a_crash_that_loses_the_runtime(tmp_path: Path) -> None:
    result = run(*trees(tmp_path), "--behaviour", "17b77eda", "--json", "--fail-on", "pick-changed,lost-runtime")

    assert result.returncode == 1, result.stderr
    found = section(result)
    assert found["behaviour"] == "17b77eda"
    (row,) = found["rows"]  # type: ignore[misc]
    assert row["oldPick"]["name"] == "vllm"
    assert row["newPick"] is None
    assert "OME 17b77eda crashes (nil pointer dereference) on runtime half" in row["error"]
    assert json.loads(result.stdout)["found"] == {"lost-runtime": 1}


def test_text_markdown_and_junit_name_the_profile(tmp_path: Path) -> None:
    base, head = trees(tmp_path)
    junit = tmp_path / "report.xml"

    text = run(base, head, "--behaviour", "17b77eda", "--junit", junit)
    markdown = run(base, head, "--behaviour", "17b77eda", "--markdown")

    assert text.returncode == 0, text.stderr
    assert "Judged as OME 17b77eda." in text.stdout
    assert "| OME profile |" in markdown.stdout
    assert " | 17b77eda | " in markdown.stdout
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None
    prop = suite.find("properties/property[@name='ome-behaviour']")
    assert prop is not None
    assert prop.get("value") == "17b77eda"


def test_an_unknown_profile_is_bad_input_naming_the_option(tmp_path: Path) -> None:
    result = run(*trees(tmp_path), "--behaviour", "v9")

    assert result.returncode == 2
    assert "--behaviour: unknown profile 'v9'; known: 17b77eda, v1.3, 078c923f" in result.stderr
    assert result.stdout == ""


def test_help_lists_every_profile(tmp_path: Path) -> None:
    result = run("--help")

    assert result.returncode == 0
    for name in matching.BEHAVIOURS:
        assert name in result.stdout


def test_trees_judged_by_different_profiles_are_not_compared(tmp_path: Path) -> None:
    base, head = trees(tmp_path)
    old = matching.read_tree([base], behaviour="17b77eda")
    new = matching.read_tree([head])

    with pytest.raises(ValueError, match=r"^diff: BASE is judged by OME 17b77eda, HEAD by OME v1.3$"):
        matching.diff(old, new)
