"""`python -m matching check --policy` and `diff --policy` on the demo: the shipped passing
policy passes, the seed policy fails until the seed patch, in every format, with exit codes
0, 1 and 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PASSING = ROOT / "demo/policies/demo.yaml"
SEED = ROOT / "demo/policies/seed-pipeline.yaml"
SEED_MODEL = "demo/seed/clusterbasemodel-qwen-image-pvc.yaml"
# The seed page's merge patch, as the one-click patch writes it.
PIPELINE = "  diffusionPipeline:\n    className: QwenImagePipeline\n    transformer:\n      library: diffusers\n"


def matching(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "matching", *map(str, args)], capture_output=True, text=True, cwd=ROOT, timeout=120
    )


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the demo with the catalog's runtimes, the same with the seed patch applied)."""
    base = tmp_path_factory.mktemp("base")
    for part in ("demo", "catalog/runtimes"):
        shutil.copytree(ROOT / part, base / part)
    head = tmp_path_factory.mktemp("head")
    shutil.copytree(base, head, dirs_exist_ok=True)
    model = head / SEED_MODEL
    model.write_text(model.read_text().replace("  storage:\n", PIPELINE + "  storage:\n"))
    return base, head


def test_the_demo_policy_passes_on_the_demo(trees: tuple[Path, Path]) -> None:
    result = matching("check", "--policy", PASSING, trees[0])

    assert result.returncode == 0, result.stdout + result.stderr
    assert "Policies OK: 10 assertion(s) evaluated, 0 failing" in result.stdout


def test_a_check_report_says_which_ome_judged_a_release_name_included(trees: tuple[Path, Path]) -> None:
    default = matching("check", "--policy", PASSING, trees[0])
    named = matching("check", "--behaviour", "v1.2.2", "--json", "--policy", PASSING, trees[0])

    assert "\nJudged as OME v1.3.\n" in default.stdout
    assert [section["behaviour"] for section in json.loads(named.stdout)["sections"]] == ["17b77eda"]


def test_the_seed_policy_fails_on_the_demo_with_omes_reason(trees: tuple[Path, Path], tmp_path: Path) -> None:
    result = matching("check", "--policy", SEED, "--policy", PASSING, "--junit", tmp_path / "r.xml", trees[0])

    assert result.returncode == 1
    assert "FAIL [error] research-diffusion/qwen-image-pvc-on-pipeline-runtime (servedBy, 1 checked)" in result.stdout
    assert "diffusion pipeline required by runtime but not specified in model" in result.stdout
    assert "owner: research ML platform" in result.stdout
    failures = ET.parse(tmp_path / "r.xml").getroot().findall(".//failure")
    assert [failure.get("type") for failure in failures] == ["servedBy"]


def test_the_seed_policy_passes_once_the_seed_patch_is_applied(trees: tuple[Path, Path]) -> None:
    result = matching("check", "--policy", SEED, "--json", trees[1])

    assert result.returncode == 0, result.stdout
    report = json.loads(result.stdout)
    assert report["failed"] is False
    assert [a["passed"] for a in report["sections"][0]["assertions"]] == [True, True]


def test_diff_with_policies_names_the_change_that_breaks_an_assertion(trees: tuple[Path, Path]) -> None:
    patched, shipped = trees[1], trees[0]

    result = matching("diff", patched, shipped, "--policy", SEED, "--json")

    assert result.returncode == 1
    policies = json.loads(result.stdout)["policies"]
    (failure,) = policies["sections"][0]["assertions"][0]["failures"]
    assert (failure["change"], failure["brokenBy"]) == ("new in HEAD", ["ClusterBaseModel qwen-image-pvc"])
    assert "diffusion pipeline required by runtime" in failure["reason"]


def test_diff_with_policies_reports_what_the_patch_fixes(trees: tuple[Path, Path]) -> None:
    result = matching("diff", trees[0], trees[1], "--policy", SEED, "--policy", PASSING, "--markdown")

    assert result.returncode == 0, result.stdout + result.stderr
    assert "### ✅ OME policies: Policies OK: 12 assertion(s) evaluated" in result.stdout
    assert "Picks that change" in result.stdout


def test_diff_policy_failures_join_the_diff_junit_report(trees: tuple[Path, Path], tmp_path: Path) -> None:
    result = matching("diff", trees[1], trees[0], "--policy", SEED, "--junit", tmp_path / "r.xml")

    assert result.returncode == 1
    names = [suite.get("name") for suite in ET.parse(tmp_path / "r.xml").getroot()]
    assert names == [f"{trees[1]} -> {trees[0]}", f"policies: {trees[1]} -> {trees[0]}"]


def test_a_bad_policy_file_exits_2_naming_file_line_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(SEED.read_text().replace("assert: hasRuntime", "assert: hasRuntim"))

    result = matching("check", "--policy", bad, ROOT / "demo/seed")

    assert result.returncode == 2
    assert result.stderr.startswith(f"{bad}:21: spec.assertions[1].assert: 'hasRuntim' is not one of servedBy")


def test_check_needs_a_policy() -> None:
    result = matching("check", ROOT / "demo/seed")

    assert result.returncode == 2
    assert "--policy" in result.stderr


def test_check_without_a_tree_says_so() -> None:
    result = matching("check", "--policy", SEED)

    assert result.returncode == 2
    assert result.stderr == "matching check: give the manifest TREE after the --policy files\n"
