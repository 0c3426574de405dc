"""The check step of the GitHub Action (action.yml), standard library only: run `ome-compat diff`
on the two trees, print a workflow annotation at the manifest line of each finding, write the
JUnit and SARIF files and the step's outputs, and post the Markdown report as one sticky
pull-request comment, updated in place on the next run. Exits with the command's status: 0
passed, 1 a `fail-on` condition occurs, 2 bad input.

Inputs come as INPUT_* variables (action.yml), the rest from the variables GitHub sets
(GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_EVENT_PATH, GITHUB_OUTPUT, RUNNER_TEMP, ...).
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKER = "<!-- ome-compat: OME runtime selection check -->"
MAX_COMMENT = 60_000  # GitHub refuses comment bodies over 65,536 characters
VERDICTS = {0: "passed", 1: "failed"}
EXIT_ERROR = 2  # as `ome-compat diff` exits for bad input


@dataclass(frozen=True)
class Inputs:
    base: str
    head: str
    root: str
    fail_on: str
    behaviour: str
    policy: tuple[str, ...]
    comment: bool

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Inputs:
        root = Path(env.get("INPUT_ROOT") or ".").resolve()

        def below_root(path: str) -> str:
            return os.path.relpath(Path(path).resolve(), root)

        return cls(
            base=below_root(env["INPUT_BASE"]),
            head=below_root(env.get("INPUT_HEAD") or "."),
            root=str(root),
            fail_on=env.get("INPUT_FAIL_ON", ""),
            behaviour=env.get("INPUT_BEHAVIOUR", ""),
            policy=tuple(env.get("INPUT_POLICY", "").split()),
            comment=env.get("INPUT_COMMENT", "true").strip().lower() == "true",
        )


def diff_argv(command: str, inputs: Inputs, *options: str) -> list[str]:
    """`ome-compat diff` with the action's inputs; paths relative to the checkout's root."""
    argv = [command, "diff", inputs.base, inputs.head]
    if inputs.fail_on:
        argv += ["--fail-on", inputs.fail_on]
    if inputs.behaviour:
        argv += ["--behaviour", inputs.behaviour]
    if inputs.policy:
        argv += ["--policy", *inputs.policy]
    return [*argv, *options]


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _where(at: Mapping[str, Any] | None) -> tuple[str, str]:
    """(the annotation's file and line properties, a note for the message): a place in HEAD's
    tree is annotated there; one only in BASE's (a deleted object) is named in the message."""
    if not at:
        return "", ""
    if at["side"] != "head":
        line = f":{at['line']}" if at["line"] else ""
        return "", f" (was at {at['file']}{line} in the base tree)"
    return f"file={_property(at['file'])}" + (f",line={at['line']}" if at["line"] else "") + ",", ""


def annotations(report: Mapping[str, Any]) -> list[str]:
    """One workflow command per finding, at its line in HEAD's tree: an error for a `fail-on`
    condition, a notice otherwise."""
    fail_on = set(report["failOn"])
    found = []
    for section in report["sections"]:
        for item in [*section["rows"], *section["isvcs"]]:
            failing = sorted(fail_on & set(item["conditions"]))
            level = "error" if failing else "notice"
            subject = item["model"] if "model" in item else item["isvc"]
            title = f"OME: {', '.join(failing or item['conditions'])}"
            where, note = _where(item.get("at"))
            why = item.get("reason") or item.get("error") or "decided differently"
            message = f"{subject['kind']} {subject['name']}: {why}{note}"
            found.append(f"::{level} {where}title={_property(title)}::{_data(message)}")
    return found


def judged_by(report: Mapping[str, Any], inputs: Inputs) -> str:
    """The workflow command that says which OME judged the trees: a notice when the behaviour
    input chose it, a warning when nothing did (ome-compat's default then judged)."""
    names = ", ".join(sorted({section["behaviour"] for section in report["sections"]}))
    if inputs.behaviour:
        return f"::notice title=OME {_property(names)}::judged as OME {_data(names)} (behaviour: {_data(inputs.behaviour)})"
    return (
        f"::warning title=OME version not given::judged as OME {_data(names)}, the default: set the behaviour "
        "input to the release your clusters run (for example v1.2.2) or a profile"
    )


def counts(report: Mapping[str, Any]) -> dict[str, int]:
    total: dict[str, int] = {}
    for section in report["sections"]:
        for name, count in section["summary"]["conditions"].items():
            total[name] = total.get(name, 0) + count
    return dict(sorted(total.items()))


def write_outputs(path: str | None, values: Mapping[str, str]) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.writelines(f"{name}={value}\n" for name, value in values.items())


class GitHub:
    """The few REST calls of a sticky comment."""

    def __init__(self, api: str, repository: str, token: str) -> None:
        self.api, self.repository, self.token = api.rstrip("/"), repository, token

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            self.api + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.token}",
                "X-GitHub-Api-Version": "2022-11-28",
                "Content-Type": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")

    def sticky_comment(self, number: int, body: str) -> str:
        """Update the comment that starts with MARKER (as the action writes it; one that only
        quotes it is someone else's), or create it; "updated" or "created"."""
        for page in range(1, 100):
            comments = self.call("GET", f"/repos/{self.repository}/issues/{number}/comments?per_page=100&page={page}")
            for comment in comments:
                if (comment.get("body") or "").startswith(MARKER):
                    self.call("PATCH", f"/repos/{self.repository}/issues/comments/{comment['id']}", {"body": body})
                    return "updated"
            if len(comments) < 100:
                break
        self.call("POST", f"/repos/{self.repository}/issues/{number}/comments", {"body": body})
        return "created"


def pull_request(env: Mapping[str, str]) -> tuple[int | None, str]:
    """The pull request's number (None outside a pull request) and the head commit."""
    event: dict[str, Any] = {}
    if env.get("GITHUB_EVENT_PATH") and Path(env["GITHUB_EVENT_PATH"]).is_file():
        event = json.loads(Path(env["GITHUB_EVENT_PATH"]).read_text(encoding="utf-8"))
    pr = event.get("pull_request") or {}
    return pr.get("number"), (pr.get("head") or {}).get("sha") or env.get("GITHUB_SHA", "HEAD")


def comment_body(markdown: str) -> str:
    if len(markdown) > MAX_COMMENT:
        markdown = markdown[:MAX_COMMENT] + "\n\n… (cut; the JUnit and SARIF files have every finding)\n"
    return f"{MARKER}\n{markdown}"


def comment(env: Mapping[str, str], number: int, body: str) -> None:
    """Post or update the sticky comment. A comment GitHub refuses (a pull request from a fork
    gets a read-only token) or cannot take is a warning: the check's verdict stands."""
    github = GitHub(env.get("GITHUB_API_URL", "https://api.github.com"), env["GITHUB_REPOSITORY"], env["GITHUB_TOKEN"])
    try:
        print(f"ome-compat: pull-request comment {github.sticky_comment(number, body)}")
        return
    except urllib.error.HTTPError as error:
        why = f"{error.code} {error.reason} (the token needs pull-requests: write; or set comment: false)"
    except OSError as error:  # URLError, timeouts
        why = str(error)
    print(f"::warning title=ome-compat could not comment on the pull request::{_data(why)}")


def run_diff(command: str, inputs: Inputs, *options: str) -> subprocess.CompletedProcess[str]:
    argv = diff_argv(command, inputs, *options)
    return subprocess.run(argv, cwd=inputs.root, capture_output=True, text=True, check=False)


def verdict_report(checked: subprocess.CompletedProcess[str]) -> dict[str, Any] | None:
    """The JSON report of a run that reached a verdict; None for bad input (exit 2) or a crash
    (exit 1 like "failed", but no report)."""
    if checked.returncode not in VERDICTS:
        return None
    try:
        report = json.loads(checked.stdout)
    except ValueError:
        return None
    return report if isinstance(report, dict) else None


def main(env: Mapping[str, str]) -> int:
    inputs = Inputs.from_env(env)
    out = Path(env.get("RUNNER_TEMP") or ".").resolve()
    files = {"junit-file": str(out / "ome-compat.junit.xml"), "sarif-file": str(out / "ome-compat.sarif")}
    number, sha = pull_request(env)
    command = env.get("OME_COMPAT") or "ome-compat"
    checked = run_diff(command, inputs, "--json", "--junit", files["junit-file"], "--sarif", files["sarif-file"])
    report = verdict_report(checked)
    if report is None:
        problem = checked.stderr.strip() or f"{command} exited with {checked.returncode}"
        print(f"::error title=ome-compat could not check the manifests::{_data(problem)}")
        markdown = (
            f"### ⚠️ OME runtime selection: the manifests could not be checked\n\n<pre>{html.escape(problem)}</pre>\n"
        )
        outputs, code = {"verdict": "error", "counts": "{}"}, EXIT_ERROR
    else:
        print("\n".join([judged_by(report, inputs), *annotations(report)]))
        link = f"{env.get('GITHUB_SERVER_URL', 'https://github.com')}/{env.get('GITHUB_REPOSITORY', '')}/blob/{sha}/"
        markdown = run_diff(command, inputs, "--markdown", "--link", link).stdout
        outputs = {"verdict": VERDICTS[checked.returncode], "counts": json.dumps(counts(report))}
        code = checked.returncode
    write_outputs(env.get("GITHUB_OUTPUT"), {**outputs, **files})
    if env.get("GITHUB_STEP_SUMMARY"):
        with open(env["GITHUB_STEP_SUMMARY"], "a", encoding="utf-8") as summary:
            summary.write(markdown)
    if inputs.comment and number is not None:
        comment(env, int(number), comment_body(markdown))
    return code


if __name__ == "__main__":
    sys.exit(main(os.environ))
