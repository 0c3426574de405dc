"""The WSGI entry point gunicorn loads."""

from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings


def test_a_web_worker_freezes_what_start_up_loaded_out_of_the_collectors_sight() -> None:
    script = "import gc, ome_dashboard.wsgi; print(gc.get_freeze_count())"
    env = {**os.environ, "DEBUG": "true"}

    run = subprocess.run(
        [sys.executable, "-c", script], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=300
    )

    assert run.returncode == 0, run.stderr[-2000:]
    assert int(run.stdout.split()[-1]) > 10_000  # Django and every app's modules, not a handful
