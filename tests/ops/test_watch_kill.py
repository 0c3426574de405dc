"""A watch worker SIGKILLed under `make up` (it gives no lease back): devrun's restarted worker
takes its watches over (once the dead hub's announcement or its leases lapsed, whichever comes
first), and every surface, read over HTTP, says `live` again. Whether the surfaces said `stale`
in between depends on which came first: the leases lapsing ("worker down") before the restarted
worker was up, or the takeover, which marks the watches lost until they connect ("watch lost").
If they did, each surface said it, with one of those reasons. A killed worker that nobody
replaces reads `stale` everywhere: tests/inventory/live/test_watch_worker.py. It runs
benchmarks/watch_kill.py with a short lease; run with `--lease 60` it measures the default
(docs/operations.md, "Freshness")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.processes import benchmark_report

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_a_killed_watch_workers_watches_move_to_its_restart_and_every_surface_says_live_again(tmp_path: Path) -> None:
    report, log = benchmark_report("watch_kill", ["--lease=6", "--database=sqlite"], tmp_path, timeout=600)
    assert report["live_before"], log
    assert report["taken_over_after_kill_s"] is not None, log
    if report["stale_after_kill_s"] is not None:
        said = report["stale_said"]
        assert (said["api"]["state"], said["banner"], said["metric"]) == ("stale", ["stale"], ["stale"])
        assert {reason.split(" (")[0] for reason in said["api"]["reasons"]} <= {"worker down", "watch lost"}, said
        assert said["ready_freshness"]["state"] == "stale"
    assert report["live_again_after_kill_s"] is not None, log
