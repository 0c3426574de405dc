"""The test suite's settings: the project's, with DEBUG and anonymous reads on, as `make run`
serves the demo. The project's defaults are the production ones (both off); the tests that
check those load ome_dashboard.settings in a fresh process (tests/test_settings.py) or turn
them off with the `settings` fixture (tests/security/). Only these environment defaults differ
(and webhooks may reach the loopback receivers the tests start; tests/policies/test_egress.py
turns that off); every other value comes from ome_dashboard.settings."""

import atexit
import contextlib
import glob
import os
import tempfile

# A developer's .env (make run writes one while it runs) must not change the tests' settings.
os.environ.setdefault("ENV_FILE", "")
os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("API_ANONYMOUS_READ", "true")
os.environ.setdefault("WEBHOOK_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128")

from ome_dashboard.settings import *  # noqa: F403


def _remove_database_files(name: str, owner: int) -> None:
    """Remove the database `name` and every file SQLite keeps beside it (WAL, shared memory,
    xdist's suffixed copies), when called by the process `owner` (not a forked child)."""
    if os.getpid() == owner:
        for path in glob.glob(glob.escape(name) + "*"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)


def sqlite_test_database(pid: int) -> str:
    """The file of process `pid`'s test database, with nothing left of an earlier process that
    had the same pid (a stray WAL would be replayed into the new database); removed again, WAL
    and all, when the process exits (Django removes the database file only)."""
    name = os.path.join(tempfile.gettempdir(), f"ome-test-{pid}.sqlite3")
    _remove_database_files(name, os.getpid())
    atexit.register(_remove_database_files, name, os.getpid())
    return name


# On SQLite the suite's database is a file, as `make run`'s is (WAL, busy timeout), not Django's
# default shared in-memory database: that one locks whole tables and answers a second writer
# (a worker thread, a watch's database thread) with "database table is locked" at once instead
# of waiting, which no deployment ever meets.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": sqlite_test_database(os.getpid())}  # noqa: F405
