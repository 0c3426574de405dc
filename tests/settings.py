"""The test suite's settings: the project's, with DEBUG and anonymous reads on, as `make run`
serves the demo. The project's defaults are the production ones (both off); the tests that
check those load ome_dashboard.settings in a fresh process (tests/test_settings.py) or turn
them off with the `settings` fixture (tests/security/). Only these two environment defaults
differ; every other value comes from ome_dashboard.settings."""

import os

# A developer's .env (make run writes one while it runs) must not change the tests' settings.
os.environ.setdefault("ENV_FILE", "")
os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("API_ANONYMOUS_READ", "true")

from ome_dashboard.settings import *  # noqa: F403

# On SQLite the suite's database is a file, as `make run`'s is (WAL, busy timeout), not Django's
# default shared in-memory database: that one locks whole tables and answers a second writer
# (a worker thread, a watch's database thread) with "database table is locked" at once instead
# of waiting, which no deployment ever meets.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    import tempfile

    DATABASES["default"]["TEST"] = {"NAME": os.path.join(tempfile.gettempdir(), f"ome-test-{os.getpid()}.sqlite3")}  # noqa: F405
