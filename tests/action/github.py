"""What the action test needs of GitHub, without GitHub: the runner's way of running a composite
action's steps (expressions, GITHUB_OUTPUT, bash -eo pipefail) and a local HTTP server standing
in for the REST API's issue comments."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")
TOKEN = "test-token"
BOT = "github-actions[bot]"  # who the token comments as


@dataclass
class ActionRun:
    exit_code: int
    stdout: str
    outputs: dict[str, str]


def _outputs(path: Path) -> dict[str, str]:
    """GITHUB_OUTPUT's `name=value` lines (the action writes no multi-line values)."""
    lines = path.read_text().splitlines() if path.exists() else []
    return dict(line.split("=", 1) for line in lines if "=" in line)


def run_composite(
    action_dir: Path, inputs: Mapping[str, str], env: Mapping[str, str], workspace: Path, temp: Path
) -> ActionRun:
    """Run action.yml's steps as the runner does: `${{ }}` expressions of `inputs`, `github` and
    `steps` evaluated, each step's `run` in `bash --noprofile --norc -eo pipefail`, stopping
    at the first failing step (the outputs its steps wrote are kept, as on GitHub)."""
    action = yaml.safe_load((action_dir / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    github = {"action_path": str(action_dir), "token": TOKEN}
    steps: dict[str, dict[str, str]] = {}
    given: dict[str, str] = {}

    def evaluate(text: str) -> str:
        def value(match: re.Match[str]) -> str:
            scope, _, rest = match[1].partition(".")
            if scope == "inputs":
                return given[rest]
            if scope == "github":
                return github[rest]
            if scope == "steps":
                step, _outputs_word, name = rest.split(".", 2)
                return steps.get(step, {}).get(name, "")
            raise AssertionError(f"expression not supported by this test: {match[0]}")

        return EXPRESSION.sub(value, str(text))

    for name, spec in action["inputs"].items():
        assert name in inputs or not spec.get("required"), f"required input {name} missing"
        given[name] = inputs.get(name, evaluate(spec.get("default", "")))
    stdout = []
    result = None
    for number, step in enumerate(action["runs"]["steps"]):
        assert step["shell"] == "bash"
        assert "if" not in step, "conditions are not evaluated by this test"
        output = temp / f"output-{number}"
        step_env = {**env, **{key: evaluate(value) for key, value in step.get("env", {}).items()}}
        step_env |= {"GITHUB_OUTPUT": str(output), "RUNNER_TEMP": str(temp), "GITHUB_WORKSPACE": str(workspace)}
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", evaluate(step["run"])],
            cwd=workspace,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        stdout.append(result.stdout)
        steps[step.get("id", str(number))] = _outputs(output)
        if result.returncode != 0:
            stdout.append(result.stderr)
            break
    assert result is not None, "the action has no steps"
    outputs = {name: evaluate(spec["value"]) for name, spec in action.get("outputs", {}).items()}
    return ActionRun(result.returncode, "".join(stdout), outputs)


@dataclass
class FakeGitHub:
    """Issue comments of one repository, kept in memory; every call is recorded."""

    repository: str
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    url: str = ""
    read_only: bool = False
    """The token may read, not write (a pull request from a fork)."""

    def handle(self, method: str, path: str, authorization: str, body: bytes) -> tuple[int, Any]:
        self.calls.append((method, path.split("?")[0], authorization))
        if authorization != f"Bearer {TOKEN}":
            return 401, {"message": "Bad credentials"}
        if self.read_only and method != "GET":
            return 403, {"message": "Resource not accessible by integration"}
        prefix = f"/repos/{self.repository}/issues/"
        found = re.fullmatch(re.escape(prefix) + r"(\d+)/comments(\?.*)?", path)
        if found and method == "GET":
            return 200, self.comments.get(int(found[1]), [])
        if found and method == "POST":
            number = 1000 + sum(map(len, self.comments.values()))
            comment = {"id": number, "body": json.loads(body)["body"], "user": {"login": BOT, "type": "Bot"}}
            self.comments.setdefault(int(found[1]), []).append(comment)
            return 201, comment
        edited = re.fullmatch(re.escape(prefix) + r"comments/(\d+)", path)
        if edited and method == "PATCH":
            for comment in (c for thread in self.comments.values() for c in thread):
                if comment["id"] == int(edited[1]):
                    comment["body"] = json.loads(body)["body"]
                    return 200, comment
        return 404, {"message": "Not Found"}


@contextmanager
def fake_github(repository: str) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(repository)

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, answer = fake.handle(self.command, self.path, self.headers.get("Authorization", ""), body)
            data = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _answer

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
