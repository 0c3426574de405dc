"""Readers for the deployment files, as Docker Compose, Docker and kustomize would read them, for
the tests of tests/ops/ (no Docker engine or API server is needed)."""

from __future__ import annotations

import ast
import fnmatch
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings

BASE = Path(settings.BASE_DIR)
# ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}, ${NAME?error}; $$ is a literal $.
_VARIABLE = re.compile(r"\$\$|\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


@dataclass(frozen=True)
class Variable:
    name: str
    default: str | None  # None: no default
    required: bool


def compose_text() -> str:
    return (BASE / "docker-compose.yml").read_text()


def compose() -> dict[str, Any]:
    """docker-compose.yml with its YAML anchors and merge keys resolved (not interpolated)."""
    return dict(yaml.safe_load(compose_text()))


def compose_variables() -> dict[str, Variable]:
    found: dict[str, Variable] = {}
    for match in _VARIABLE.finditer(compose_text()):
        if match["name"] is None:
            continue
        op = match["op"] or ""
        variable = Variable(match["name"], match["arg"] if "-" in op else None, "?" in op)
        found.setdefault(variable.name, variable)
    return found


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """Compose's interpolation of a value (recursively), with `env` as the environment."""
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        if match[0] == "$$":
            return "$"
        name, op, arg = match["name"], match["op"] or "", match["arg"] or ""
        current = env.get(name)
        unset = current is None or (op.startswith(":") and current == "")
        if "?" in op and unset:
            raise ValueError(f"{name}: {arg}")
        if "-" in op and unset:
            return arg
        return current or ""

    return _VARIABLE.sub(substitute, value)


def shell_commands(command: list[str]) -> list[list[str]]:
    """The commands a service runs: its argv, or each `&&` part of an `sh -c` script."""
    if command[:2] == ["sh", "-c"]:
        return [shlex.split(part) for part in command[2].split("&&")]
    return [command]


@dataclass
class Instruction:
    keyword: str
    arguments: str
    stage: int


@dataclass
class Dockerfile:
    instructions: list[Instruction] = field(default_factory=list)
    stages: list[str] = field(default_factory=list)  # each stage's `FROM` line

    def of_stage(self, stage: int, keyword: str | None = None) -> list[Instruction]:
        return [i for i in self.instructions if i.stage == stage and (keyword is None or i.keyword == keyword)]


def dockerfile() -> Dockerfile:
    """The Dockerfile's instructions (continuation lines joined, comments dropped), by stage."""
    text = (BASE / "Dockerfile").read_text()
    logical: list[str] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical.append(pending + stripped)
        pending = ""
    parsed = Dockerfile()
    stage = -1
    for line in logical:
        keyword, _, arguments = line.partition(" ")
        if keyword.upper() == "FROM":
            stage += 1
            parsed.stages.append(arguments)
        parsed.instructions.append(Instruction(keyword.upper(), arguments.strip(), stage))
    return parsed


def dockerignore_patterns() -> list[str]:
    lines = (BASE / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def ignored_by_docker(path: str, patterns: list[str]) -> bool:
    """Docker's rule, for the patterns used here: a pattern matches the path or a folder above it
    (`**/` matches any number of folders); a later `!pattern` takes a path back in."""
    parts = path.split("/")
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    ignored = False
    for pattern in patterns:
        keep = pattern.startswith("!")
        body = pattern[1:] if keep else pattern
        regex = fnmatch.translate(body).replace(r"(?s:.*/", r"(?s:(?:.*/)?")
        if body.startswith("**/"):
            regex = fnmatch.translate(body[3:])
            hit = any(re.match(regex, candidate.split("/")[-1]) for candidate in candidates)
        else:
            hit = any(re.match(regex, candidate) for candidate in candidates)
        if hit:
            ignored = not keep
    return ignored


def build_context(patterns: list[str]) -> Iterator[str]:
    """The files `docker build .` sends: every file in the project not ignored."""
    for folder, subfolders, names in os.walk(BASE):
        relative = Path(folder).relative_to(BASE).as_posix()
        prefix = "" if relative == "." else f"{relative}/"
        # Without `!` patterns nothing under an ignored folder comes back: skip walking it.
        subfolders[:] = sorted(d for d in subfolders if not ignored_by_docker(prefix + d, patterns))
        for name in sorted(names):
            if not ignored_by_docker(prefix + name, patterns):
                yield prefix + name


def deploy_documents(folder: str = "deploy") -> list[dict[str, Any]]:
    """The objects a kustomization lists (its resources), as written (no kustomize transformations)."""
    root = BASE / folder
    kustomization = yaml.safe_load((root / "kustomization.yaml").read_text())
    documents = []
    for resource in kustomization["resources"]:
        documents += [doc for doc in yaml.safe_load_all((root / resource).read_text()) if doc]
    return documents


def objects_of(documents: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for doc in documents if doc["kind"] == kind}


def config_env(folder: str = "deploy") -> dict[str, str]:
    values = {}
    for line in (BASE / folder / "config.env").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def settings_variables() -> set[str]:
    """The environment variables ome_dashboard.settings.knobs reads: the names its `env.<reader>(NAME, ...)`
    calls pass."""
    tree = ast.parse((BASE / "ome_dashboard" / "settings" / "knobs.py").read_text())
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "env"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def documented_variables() -> list[str]:
    """The variables docs/configuration.md documents: those its tables' rows name in their first
    column (a row may name several), once per row that names them."""
    text = (BASE / "docs" / "configuration.md").read_text()
    return [
        name for cell in re.findall(r"^\| ([^|]+) \|", text, re.M) for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", cell)
    ]
