"""`diff` shows a cluster-scoped model once, "same in every namespace", where its rows change
alike in cluster scope and every namespace; a namespace that decides differently keeps them
apart. The fleet folds with the same rule (`matching.fold_everywhere`)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import matching

from .test_diff import model, run, runtime, tree


def namespaced(name: str, namespace: str, *, architecture: str = "MistralForCausalLM") -> dict[str, Any]:
    """A ServingRuntime of one namespace (by default one that does not match the model)."""
    obj = runtime(name)
    obj["kind"] = "ServingRuntime"
    obj["metadata"]["namespace"] = namespace
    obj["spec"]["supportedModelFormats"][0]["modelArchitecture"] = architecture
    return obj


NAMESPACES = [namespaced("other-a", "team-a"), namespaced("other-b", "team-b")]


def sections(tmp_path: Path, base: list[dict[str, Any]], head: list[dict[str, Any]], *args: str) -> Any:
    result = run(tree(tmp_path / "base", *base), tree(tmp_path / "head", *head), *args)
    assert result.returncode in (0, 1), result.stderr
    return result


def test_a_change_alike_in_every_namespace_is_one_row_marked_everywhere(tmp_path: Path) -> None:
    base = [model(), runtime("vllm"), *NAMESPACES]
    head = [model(), runtime("vllm", framework="4.30.0"), *NAMESPACES]

    section = json.loads(sections(tmp_path, base, head, "--json").stdout)["sections"][0]

    (row,) = section["rows"]
    assert (row["namespace"], row["everywhere"]) == ("", True)
    assert row["error"].startswith("no runtime found to support model safetensors")  # cluster scope's
    assert section["summary"]["conditions"]["lost-runtime"] == 1
    assert section["summary"]["rowsCompared"] == 3  # cluster scope, team-a, team-b were compared

    text = sections(tmp_path / "text", base, head).stdout
    assert "ClusterBaseModel llama (same in every namespace): ClusterServingRuntime vllm" in text
    assert " in team-a" not in text
    assert "cluster scope" not in text


def test_every_format_shows_the_folded_row_once(tmp_path: Path) -> None:
    base = [model(), runtime("vllm"), *NAMESPACES]
    head = [model(), runtime("vllm", framework="4.30.0"), *NAMESPACES]
    junit, sarif = tmp_path / "r.xml", tmp_path / "r.sarif"

    markdown = sections(tmp_path, base, head, "--markdown", "--junit", str(junit), "--sarif", str(sarif)).stdout

    assert markdown.count("llama (same in every namespace)") >= 1
    assert "team-a" not in markdown
    cases = [case for case in ET.parse(junit).iter("testcase") if "llama" in case.get("classname", "")]
    assert [case.get("name") for case in cases] == ["same in every namespace"]
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    (result,) = results
    assert "lost-runtime" in result["properties"]["conditions"]
    assert "llama (same in every namespace)" in result["message"]["text"]


def test_a_namespace_that_decides_differently_keeps_the_rows_apart(tmp_path: Path) -> None:
    # In team-a a runtime of its own still serves the model: only that namespace keeps a pick.
    serving_a = namespaced("own-a", "team-a", architecture="LlamaForCausalLM")
    base = [model(), runtime("vllm", priority=5), serving_a, namespaced("other-b", "team-b")]
    head = [model(), runtime("vllm", framework="4.30.0"), serving_a, namespaced("other-b", "team-b")]

    section = json.loads(sections(tmp_path, base, head, "--json").stdout)["sections"][0]

    rows = {(row["namespace"], row["everywhere"]): row for row in section["rows"]}
    assert set(rows) == {("", False), ("team-a", False), ("team-b", False)}
    assert rows[("team-a", False)]["newPick"]["name"] == "own-a"
    assert "in namespace team-b" in rows[("team-b", False)]["error"]


def test_a_folded_row_counts_every_row_and_cell_it_stands_for(tmp_path: Path) -> None:
    base = [model(), runtime("vllm"), *NAMESPACES]
    head = [model(), runtime("vllm", framework="4.30.0"), *NAMESPACES]

    section = json.loads(sections(tmp_path, base, head, "--json").stdout)["sections"][0]

    (row,) = section["rows"]
    assert row["standsFor"] == 3
    assert (section["summary"]["rowsChanged"], section["summary"]["rowsCompared"]) == (3, 3)
    assert section["summary"]["cellsChanged"] == 3 * len(row["cells"]) > 0
    text = sections(tmp_path / "text", base, head).stdout
    assert "rows 3 of 3 compared change" in text


def test_rows_alike_in_some_compared_namespaces_only_are_not_folded() -> None:
    # A report of changes alone: alike in cluster scope and team-a, and no row for team-b (its own
    # runtime keeps its pick there). Told what was compared, the fold claims "every" only when true.
    llama = ("ClusterBaseModel", "", "llama")
    rows = [("", "lost vllm"), ("team-a", "lost vllm")]

    def fold(compared: tuple[str, ...]) -> list[tuple[tuple[str, str], bool]]:
        return matching.fold_everywhere(
            rows, model=lambda _row: llama, same=lambda row: row[1], namespace=lambda row: row[0],
            compared=lambda _model: compared,
        )  # fmt: skip

    assert fold(("", "team-a")) == [(rows[0], True)]
    assert fold(("", "team-a", "team-b")) == [(rows[0], False), (rows[1], False)]
    assert matching.fold_everywhere(rows, model=lambda _row: llama, same=lambda row: row[1]) == [(rows[0], True)]
