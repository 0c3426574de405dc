"""The code stays as `make lint` leaves it: ruff's checks and format, the import contracts of
pyproject.toml (lint-imports), mypy over the whole project; and no module past a generous hard
limit (the rule is one concept per module, docs/architecture.md)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from django.conf import settings

from tests.support.apps import project_packages

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PACKAGES = project_packages()
# Modules hold one concept each (docs/architecture.md, "Rules"); size is not the rule. This hard
# limit only catches a module that has grown into several.
MAX_MODULE_LINES = 800


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("command", [["check", "."], ["format", "--check", "."]], ids=["check", "format"])
def test_ruff_passes(command: list[str]) -> None:
    result = _run([sys.executable, "-m", "ruff", *command])

    assert result.returncode == 0, result.stdout + result.stderr


def test_the_import_contracts_are_kept() -> None:
    result = _run([str(BIN / "lint-imports"), "--no-cache"])

    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes_on_the_whole_project() -> None:
    result = _run([sys.executable, "-m", "mypy", "--no-incremental"])

    assert result.returncode == 0, result.stdout + result.stderr


def test_every_list_of_the_apps_names_the_same_packages() -> None:
    """The import contracts' root_packages are the one list; Django's and mypy's must agree."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        mypy_files = tomllib.load(file)["tool"]["mypy"]["files"]
    django_apps = {app for app in settings.INSTALLED_APPS if (ROOT / app / "apps.py").exists()}

    assert set(mypy_files) == set(PACKAGES)
    assert django_apps == set(PACKAGES) - {"ome_dashboard", "core", "matching"}


def test_no_module_grows_past_the_hard_limit() -> None:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            lines = len(path.read_text().splitlines())
            if lines > MAX_MODULE_LINES:
                found[str(path.relative_to(ROOT))] = lines

    assert found == {}


def test_tests_run_coroutines_only_through_run_alone() -> None:
    # asyncio.run fails in a pytest worker where a browser test left Playwright's loop running on
    # the main thread; tests.support.aio.run_alone runs the coroutine on a thread of its own.
    allowed = {ROOT / "tests" / "support" / "aio.py", Path(__file__).resolve()}
    direct = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "tests").rglob("*.py"))
        if "asyncio.run(" in path.read_text() and path not in allowed
    ]

    assert direct == []
