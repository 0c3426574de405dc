"""tests/ops/pg.py, which gives `make test` its PostgreSQL pass: a command runs against a fresh
database on a free port, its exit code comes back, and nothing is left running or on disk."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.ops import pg
from tests.support.net import port_is_open

pytestmark = pytest.mark.usefixtures("postgres_installed")


@pytest.fixture
def postgres_installed() -> None:
    assert pg.bin_dir() is not None, (
        "PostgreSQL's binaries are not installed: apt-get install postgresql (.ci/test-deps)"
    )


SHOW_DATABASE = """
import os, sys, psycopg
with psycopg.connect(os.environ["DATABASE_URL"]) as connection:
    print(connection.execute("SELECT current_database()").fetchone()[0])
print(os.environ["DATABASE_URL"])
sys.exit(3)
"""


def test_a_command_runs_against_a_throwaway_database_that_is_gone_afterwards() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tests.ops.pg", "--database", "bench", "--", sys.executable, "-c", SHOW_DATABASE],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 3, result.stderr
    database, url = result.stdout.splitlines()[-2:]
    assert database == "bench"
    match = re.fullmatch(r"postgres://postgres@127\.0\.0\.1:(\d+)/bench", url)
    assert match is not None
    assert not port_is_open(int(match[1]))
    folder = re.search(r"^tests\.ops\.pg: PostgreSQL \S+ at \S+ \((/\S+)\)$", result.stdout, re.MULTILINE)
    assert folder is not None
    assert not Path(folder[1]).exists()


def test_it_says_whether_postgresql_is_installed() -> None:
    assert pg.main(["--available"]) == 0
