"""The GitHub Action (action.yml) run without GitHub: its steps as the runner runs them, with a
faked GITHUB_* environment and a local server standing in for the REST API. A pull request that
disables the seed page's runtime fails the check, with an annotation at the runtime's line, a
valid SARIF file and one comment; the fixed pull request passes and the same comment is updated."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from sarif_kit.validate import validation_errors

from matching.cli import main as matching_main
from tests.action.github import fake_github, run_composite
from tests.support.manifest_trees import HEAD_FILE, ROOT, write_trees


def _load_action_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ome_compat_action_run", ROOT / "action/run.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


action_run = _load_action_script()

pytestmark = pytest.mark.slow
REPOSITORY = "platform/manifests"
PR = 7


def github_env(api: str, folder: Path) -> dict[str, str]:
    event = folder / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR, "head": {"sha": "c0ffee"}}}))
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(folder),
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": api,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_SHA": "merge-commit",
        "GITHUB_STEP_SUMMARY": str(folder / "summary.md"),
    }


def test_the_action_comments_annotates_and_writes_sarif_then_updates_its_comment(tmp_path: Path) -> None:
    base, head, line = write_trees(tmp_path)
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    inputs = {"base": str(base), "fail-on": "lost-runtime", "python": sys.executable}

    with fake_github(REPOSITORY) as github:
        env = github_env(github.url, tmp_path)
        failing = run_composite(ROOT, inputs, env, head, temp)
        first = [dict(comment) for comment in github.comments[PR]]
        sarif = json.loads((temp / "ome-compat.sarif").read_text())
        shutil.copyfile(base / HEAD_FILE, head / HEAD_FILE)
        passing = run_composite(ROOT, inputs, env, head, temp)

    assert failing.exit_code == 1, failing.stdout
    assert failing.outputs["verdict"] == "failed"
    assert json.loads(failing.outputs["counts"])["lost-runtime"] == 1
    annotation = next(out for out in failing.stdout.splitlines() if out.startswith("::error "))
    assert annotation.startswith(
        f"::error file={HEAD_FILE},line={line},title=OME%3A lost-runtime::ClusterBaseModel qwen-image-pvc: "
    )
    assert "ome-compat: pull-request comment created" in failing.stdout
    assert "::warning title=OME version not given::judged as OME v1.3, the default" in failing.stdout
    (comment,) = first
    assert comment["body"].startswith(action_run.MARKER)
    assert "❌ OME runtime selection: FAILED: lost-runtime (1)" in comment["body"]
    link = f"https://github.example/{REPOSITORY}/blob/c0ffee/{HEAD_FILE}#L{line}"
    assert f"({link})" in comment["body"]
    assert validation_errors(sarif) == []
    assert sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"] == {"startLine": line}

    assert passing.exit_code == 0, passing.stdout
    assert "ome-compat: pull-request comment updated" in passing.stdout
    (updated,) = github.comments[PR]
    assert updated["id"] == comment["id"]
    assert "✅ OME runtime selection: OK: none of lost-runtime occurs." in updated["body"]
    assert passing.outputs["verdict"] == "passed"
    assert json.loads(passing.outputs["counts"]) == {}
    assert Path(passing.outputs["junit-file"]).is_file()
    assert {auth for _method, _path, auth in github.calls} == {"Bearer test-token"}
    assert "FAILED: lost-runtime (1)" in (tmp_path / "summary.md").read_text()


def test_inputs_become_the_command_line_with_policies_passed_on() -> None:
    inputs = action_run.Inputs.from_env(
        {
            "INPUT_BASE": "/w/base/manifests",
            "INPUT_HEAD": "/w/head/manifests",
            "INPUT_ROOT": "/w/head",
            "INPUT_FAIL_ON": "lost-runtime,isvc-rejected",
            "INPUT_BEHAVIOUR": "17b77eda",
            "INPUT_POLICY": "policies/a.yaml\npolicies/b.yaml",
            "INPUT_COMMENT": "false",
        }
    )

    argv = action_run.diff_argv("ome-compat", inputs, "--json")

    assert argv == [
        "ome-compat", "diff", "../base/manifests", "manifests",
        "--fail-on", "lost-runtime,isvc-rejected", "--behaviour", "17b77eda",
        "--policy", "policies/a.yaml", "policies/b.yaml", "--json",
    ]  # fmt: skip
    assert inputs.comment is False
    assert action_run.diff_argv("ome-compat", action_run.Inputs.from_env({"INPUT_BASE": "/w"}))[-1] != "--policy"


def test_a_comment_github_refuses_is_a_warning_and_the_verdict_stands(tmp_path: Path, capsys: Any) -> None:
    base, head, _line = write_trees(tmp_path)
    command = tmp_path / "ome-compat"
    command.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m matching "$@"\n')
    command.chmod(0o755)

    with fake_github(REPOSITORY) as github:
        github.read_only = True
        env = github_env(github.url, tmp_path) | {
            "OME_COMPAT": str(command),
            "RUNNER_TEMP": str(tmp_path),
            "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_TOKEN": "test-token",
            "INPUT_BASE": str(base),
            "INPUT_HEAD": str(head),
            "INPUT_ROOT": str(head),
            "INPUT_FAIL_ON": "lost-runtime",
        }
        code = action_run.main(env)

    printed = capsys.readouterr().out
    assert code == 1
    assert "::warning title=ome-compat could not comment on the pull request::403" in printed
    assert "verdict=failed" in (tmp_path / "output").read_text()
    assert [method for method, _path, _auth in github.calls] == ["GET", "POST"]


def test_a_finding_caused_by_a_deleted_object_is_annotated_without_a_file(tmp_path: Path, capsys: Any) -> None:
    base, head, line = write_trees(tmp_path)
    model_only = (base / HEAD_FILE).read_text().split("\n---\n")[0]
    (head / HEAD_FILE).write_text(model_only + "\n")
    assert matching_main(["diff", str(base), str(head), "--json", "--fail-on", "lost-runtime"]) == 1
    report = json.loads(capsys.readouterr().out)

    found = action_run.annotations(report)

    (error,) = [line for line in found if line.startswith("::error ")]
    assert error.startswith("::error title=OME%3A lost-runtime::ClusterBaseModel qwen-image-pvc: ")
    assert error.endswith(f" (was at {base / HEAD_FILE}:{line} in the base tree)")


def test_a_release_named_in_the_input_judges_and_the_annotation_says_which_ome(tmp_path: Path, capsys: Any) -> None:
    base, head, _line = write_trees(tmp_path)
    assert matching_main(["diff", str(base), str(head), "--json", "--behaviour", "v1.2.2"]) == 0
    report = json.loads(capsys.readouterr().out)
    inputs = action_run.Inputs.from_env({"INPUT_BASE": str(base), "INPUT_BEHAVIOUR": "v1.2.2"})

    assert {section["behaviour"] for section in report["sections"]} == {"17b77eda"}
    assert action_run.judged_by(report, inputs) == (
        "::notice title=OME 17b77eda::judged as OME 17b77eda (behaviour: v1.2.2)"
    )


def test_a_comment_that_only_quotes_the_marker_is_not_taken_over() -> None:
    quoting = {"id": 5, "body": f"Why does this fail?\n> {action_run.MARKER}\n> ❌ OME runtime selection"}

    with fake_github(REPOSITORY) as github:
        github.comments[PR] = [quoting]
        client = action_run.GitHub(github.url, REPOSITORY, "test-token")
        done = client.sticky_comment(PR, action_run.comment_body("report"))

    assert done == "created"
    assert github.comments[PR][0] == quoting
    assert github.comments[PR][1]["body"] == f"{action_run.MARKER}\nreport"


def test_a_command_that_crashes_is_an_error_not_a_failed_check(tmp_path: Path, capsys: Any) -> None:
    base, head, _line = write_trees(tmp_path)
    command = tmp_path / "ome-compat"
    command.write_text("#!/bin/sh\necho 'Traceback (most recent call last):' >&2\necho 'KeyError: boom' >&2\nexit 1\n")
    command.chmod(0o755)
    env = {
        "OME_COMPAT": str(command),
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "INPUT_BASE": str(base),
        "INPUT_HEAD": str(head),
        "INPUT_ROOT": str(head),
        "INPUT_COMMENT": "false",
    }

    code = action_run.main(env)

    assert code == 2
    assert "verdict=error" in (tmp_path / "output").read_text()
    assert "KeyError: boom" in capsys.readouterr().out
