"""What `make run` leaves for the person running it: the settings file that `manage.py` commands
beside it read (settings.ENV_FILE), and the one box that ends its start-up."""

from __future__ import annotations

import os
from pathlib import Path

from access.management.commands.demo_admin import DEMO_ADMIN

BASE_DIR = Path(__file__).resolve().parent.parent

# The settings `make run` gives its children that `manage.py` beside it needs too.
ENV_FILE_KEYS = ("DEBUG", "API_ANONYMOUS_READ", "REDIS_URL", "DATABASE_URL", "PORT")
ENV_FILE_HEADER = "# Written by `make run` (ome_dashboard.devrun) while it runs; removed when it stops.\n"


def env_file_write(env: dict[str, str]) -> Path | None:
    """Write env's values of ENV_FILE_KEYS to ENV_FILE (as the settings read it) and return its
    path; None, writing nothing, when ENV_FILE is empty or names a file `make run` did not write
    (someone's own .env, which settings read as it is)."""
    value = os.environ.get("ENV_FILE", str(BASE_DIR / ".env"))
    path = Path(value)
    if not value or (path.exists() and not path.read_text(errors="replace").startswith(ENV_FILE_HEADER)):
        return None
    lines = [f"{key}={env[key]}" for key in ENV_FILE_KEYS if key in env]
    path.write_text(ENV_FILE_HEADER + "\n".join(lines) + "\n")
    return path


def startup_box(*, url: str, password: str) -> str:
    """The box that ends `make run`'s start-up: where, who, the password, how to stop."""
    rows = [
        ("OME Compat", url),
        ("User", DEMO_ADMIN),
        ("Password", password),
        ("Stop", "Ctrl-C (or SIGTERM to make run)"),
    ]
    lines = [f"{label:<10}  {value}" for label, value in rows]
    width = max(len(line) for line in lines)
    edge = "+" + "-" * (width + 2) + "+"
    return "\n".join([edge, *(f"| {line:<{width}} |" for line in lines), edge])
