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
