"""A watch worker SIGKILLed under `make up` (it gives no lease back): every surface, read over
HTTP, says `stale` (worker down) once its leases lapse, and `live` again once devrun's restarted
worker took the watches over. It runs benchmarks/watch_kill.py with a short lease; run with
`--lease 60` it measures the default (docs/operations.md, "Freshness")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_killed_watch_worker_reads_stale_on_every_surface_and_live_again_after_its_restart(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"

    run = subprocess.run(
        [sys.executable, "-m", "benchmarks.watch_kill", "--lease=6", "--database=sqlite", f"--report={report_path}"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(report_path.read_text())
    log = "\n".join(report["stack_log_tail"])
    said = report["stale_said"]
    assert report["live_before"], log
    assert report["stale_after_kill_s"] is not None, log
    assert (said["api"]["state"], said["banner"], said["metric"]) == ("stale", ["stale"], ["stale"])
    assert {reason.split(" (")[0] for reason in said["api"]["reasons"]} == {"worker down"}, said
    assert said["ready_freshness"]["state"] == "stale"
    assert report["live_again_after_kill_s"] is not None, log
