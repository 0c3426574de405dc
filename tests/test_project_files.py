"""Checks on the files around the code: CI entry point, Makefile, docker-compose.yml, Dockerfile,
.dockerignore and the kustomize manifests in deploy/. There is no Docker engine or Kubernetes
API server here, so these read the files and check what each refers to: modules, commands,
options, settings, documented variables; `kubectl kustomize` renders deploy/ when kubectl is there."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib

import yaml
from django.conf import settings


def test_ci_entry_point_is_executable_bash_with_valid_syntax() -> None:
    script = settings.BASE_DIR / ".ci" / "run"

    assert os.access(script, os.X_OK)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0


def test_compose_file_parses_and_names_its_nine_services() -> None:
    compose = yaml.safe_load((settings.BASE_DIR / "docker-compose.yml").read_text())

    assert set(compose["services"]) == {
        "postgres",
        "redis",
        "migrate",
        "web",
        "worker",
        "control-worker",
        "matrix-worker",
        "watch-worker",
        "beat",
    }


def make_dry_run(target: str) -> str:
    """The recipe make would run, with the Makefile's defaults (not this run's overrides, such as
    `TEST_DATABASES=sqlite make test`, which make passes to its children through the environment)."""
    env = {key: value for key, value in os.environ.items() if key not in ("TEST_DATABASES", "PYTEST_ARGS", "MAKEFLAGS")}
    result = subprocess.run(
        ["make", "-n", target], cwd=settings.BASE_DIR, capture_output=True, text=True, timeout=60, check=True, env=env
    )
    return result.stdout


def test_make_test_runs_the_suite_on_sqlite_then_on_a_throwaway_postgresql() -> None:
    recipe = make_dry_run("test")

    assert "for db in sqlite postgres" in recipe
    assert "env -u DATABASE_URL .venv/bin/pytest -q -n 2 --durations=20" in recipe
    assert ".venv/bin/python -m tests.ops.pg -- .venv/bin/pytest -q -n 2 --durations=20 -m" in recipe
    # pytest's "no tests collected" is not a failure, in either pass.
    assert "if [ $rc -eq 5 ]; then" in recipe


def test_the_postgresql_pass_leaves_out_only_markers_that_exist() -> None:
    recipe = make_dry_run("test")
    expression = re.search(r'-m "([^"]+)"', recipe)
    markers = tomllib.loads((settings.BASE_DIR / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"][
        "markers"
    ]

    assert expression is not None
    used = set(re.findall(r"\b(?!not\b|and\b|or\b)\w+", expression[1]))
    assert used <= {marker.split(":")[0] for marker in markers}
    assert used == {"browser", "integration", "slow"}


def test_make_up_runs_the_production_processes_through_devrun() -> None:
    assert ".venv/bin/python -m ome_dashboard.devrun --production" in make_dry_run("up")


def test_ci_runs_make_test_which_installs_postgresql_first_when_its_binaries_are_missing() -> None:
    ci = (settings.BASE_DIR / ".ci" / "run").read_text()
    deps = (settings.BASE_DIR / ".ci" / "test-deps").read_text()
    recipe = make_dry_run("test")

    assert ci.rstrip().endswith("exec make test")
    assert "missing+=(postgresql)" in deps
    assert recipe.index(".ci/test-deps") < recipe.index("tests.ops.pg")
