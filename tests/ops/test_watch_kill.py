"""A watch worker SIGKILLed under `make up` (it gives no lease back): every surface, read over
HTTP, says `stale` (worker down) once its leases lapse, and `live` again once devrun's restarted
worker took the watches over. It runs benchmarks/watch_kill.py with a short lease; run with
`--lease 60` it measures the default (docs/operations.md, "Freshness")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.processes import benchmark_report

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_killed_watch_worker_reads_stale_on_every_surface_and_live_again_after_its_restart(tmp_path: Path) -> None:
    report, log = benchmark_report("watch_kill", ["--lease=6", "--database=sqlite"], tmp_path, timeout=600)
    said = report["stale_said"]
    assert report["live_before"], log
    assert report["stale_after_kill_s"] is not None, log
    assert (said["api"]["state"], said["banner"], said["metric"]) == ("stale", ["stale"], ["stale"])
    assert {reason.split(" (")[0] for reason in said["api"]["reasons"]} == {"worker down"}, said
    assert said["ready_freshness"]["state"] == "stale"
    assert report["live_again_after_kill_s"] is not None, log
