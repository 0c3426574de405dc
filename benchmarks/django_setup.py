"""Start Django for a benchmark against DATABASE_URL, or a fresh SQLite file when it is unset."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

from tests.ops import pg


def setup_django() -> str:
    """Configure, migrate and return a description of the database used."""
    if not os.environ.get("DATABASE_URL"):
        folder = tempfile.mkdtemp(prefix="ome-bench-")
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ome_dashboard.settings")
    # A benchmark runs a local copy: the settings' production defaults need SECRET_KEY and ALLOWED_HOSTS.
    os.environ.setdefault("DEBUG", "true")
    os.environ["MATRIX_UPDATE_ON_CHANGE"] = "false"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.db import connection

    return f"{connection.vendor} ({os.environ['DATABASE_URL'].split('@')[-1]})"


@contextlib.contextmanager
def throwaway_database(kind: str) -> Iterator[tuple[str, pg.PostgresCluster | None]]:
    """The URL of a new database, "postgres" (a throwaway server, also yielded) or "sqlite"."""
    if kind == "postgres":
        with pg.running_postgres() as server:
            server.create_database("bench")
            yield server.url("bench"), server
    else:
        with tempfile.TemporaryDirectory(prefix="ome-bench-") as folder:
            yield f"sqlite:///{folder}/bench.sqlite3", None


def default_database() -> str:
    """PostgreSQL, as deployed, where its server binaries are installed; else SQLite."""
    return "postgres" if pg.bin_dir() is not None else "sqlite"
