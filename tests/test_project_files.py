"""Checks on the files around the code: CI entry point and compose file."""

from __future__ import annotations

import os
import subprocess

import yaml
from django.conf import settings


def test_ci_entry_point_is_executable_bash_with_valid_syntax() -> None:
    script = settings.BASE_DIR / ".ci" / "run"

    assert os.access(script, os.X_OK)
    assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0


def test_compose_file_parses_and_names_the_four_services() -> None:
    compose = yaml.safe_load((settings.BASE_DIR / "docker-compose.yml").read_text())

    assert set(compose["services"]) == {"redis", "web", "worker", "beat"}
