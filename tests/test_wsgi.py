"""The WSGI entry point gunicorn loads."""

from __future__ import annotations

import os
import subprocess
import sys

from django.conf import settings


def frozen_after_import(first: str) -> int:
    script = f"{first}; import gc, ome_dashboard.wsgi; print(gc.get_freeze_count())"
    env = {**os.environ, "DEBUG": "true"}
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return int(run.stdout.split()[-1])


def test_a_gunicorn_worker_freezes_what_start_up_loaded_out_of_the_collectors_sight() -> None:
    assert frozen_after_import("import gunicorn.arbiter") > 10_000  # Django and every app, not a handful


def test_a_process_that_only_imports_the_module_keeps_its_heap_as_it_was() -> None:
    # A test walking every module, or a tool, must still see its objects in gc.get_objects().
    assert frozen_after_import("pass") == 0
