"""One validation for every entry point, on the command line: `python -m matching diff`
checks both trees against OME's CRD schemas; a misspelled field is an error (exit 2) naming
the file, document, line and path with a "did you mean"; `--lenient` makes it a warning."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

import matching

from .test_diff import model, run, runtime, tree

TYPO = "modelSizeRange:\n  mx: 65B\n"


def typo_trees(tmp_path: Path) -> tuple[Path, Path, Path]:
    base = tree(tmp_path / "base", model(), runtime("vllm"))
    head = tmp_path / "head"
    shutil.copytree(base, head)
    broken = head / "01-vllm.yaml"
    text = yaml.safe_dump(runtime("vllm"))
    broken.write_text(text.replace("spec:\n", "spec:\n  " + TYPO.replace("\n  ", "\n    "), 1))
    return base, head, broken


def test_a_misspelled_field_makes_diff_exit_2_naming_file_line_and_path(tmp_path: Path) -> None:
    base, head, broken = typo_trees(tmp_path)
    line = broken.read_text().splitlines().index("    mx: 65B") + 1

    result = run(base, head, "--fail-on", "any-change")

    assert result.returncode == 2
    assert result.stdout == ""
    assert (
        f"HEAD_PATH {broken}: document 0, line {line}: ClusterServingRuntime vllm: spec.modelSizeRange.mx: "
        "unknown field" in result.stderr
    )
    assert "(did you mean max?)" in result.stderr


def test_lenient_reports_the_same_problem_as_a_warning_and_compares(tmp_path: Path) -> None:
    base, head, broken = typo_trees(tmp_path)

    result = run(base, head, "--fail-on", "any-change", "--lenient")

    assert result.returncode == 0, result.stderr
    assert f"{broken}: document 0" in result.stderr
    assert "warning: spec.modelSizeRange.mx: unknown field" in result.stderr
    assert "No change" in result.stdout


def test_a_wrong_type_is_an_error_with_its_line(tmp_path: Path) -> None:
    bad = runtime("vllm")
    bad["spec"]["supportedModelFormats"][0]["autoSelect"] = "yes"
    (tmp_path / "rt.yaml").write_text(yaml.safe_dump(bad))

    with pytest.raises(matching.TreeError) as caught:
        matching.read_tree([tmp_path])

    found = {(problem.path, problem.hint) for problem in caught.value.details}
    assert all(problem.line is not None and problem.is_error for problem in caught.value.details)
    assert ("spec.supportedModelFormats[0].autoSelect", None) in found
