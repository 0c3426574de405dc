"""The project's packages, as the one list in pyproject.toml names them (the import contracts'
root_packages), for the tests that walk every module."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent


def project_packages() -> tuple[str, ...]:
    """Every package of the project, from the wiring down to matching."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        return tuple(tomllib.load(file)["tool"]["importlinter"]["root_packages"])
