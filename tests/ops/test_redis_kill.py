"""Redis SIGKILLed while changes flow, kept down longer than every retry budget (tests/ops/
test_redis_outage.py's OUTAGE_AT_LEAST), then started again, under `make up`: meanwhile every
surface says the matrix is behind (none says `live`) and the broker is down; afterwards the
cluster is `live` on every surface, the inventory equals the cluster and the matrix a full
rebuild. It runs benchmarks/redis_outage.py, which also prints the figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.redis_outage import LAG_STALE_AFTER
from tests.ops import pg
from tests.ops.test_redis_outage import OUTAGE_AT_LEAST
from tests.support.processes import benchmark_report

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OUTAGE = OUTAGE_AT_LEAST + LAG_STALE_AFTER


def test_while_redis_is_down_every_surface_says_the_matrix_is_behind_and_afterwards_all_is_live_and_right(
    tmp_path: Path,
) -> None:
    database = "postgres" if pg.bin_dir() is not None else "sqlite"
    report, log = benchmark_report(
        "redis_outage", [f"--outage={OUTAGE:g}", f"--database={database}"], tmp_path, timeout=900
    )
    before, during, after = report["before"], report["during"], report["after"]
    assert report["live_before"], log
    assert (before["api"]["state"], before["banner"], before["metric"]) == ("live", ["live"], ["live"])
    assert (before["ready_status"], before["ready_broker"]) == (200, "ok")
    # Down: the watch still brings the changes in, the matrix cannot follow, and every surface says so.
    assert report["inventory_caught_up_while_down"], log
    assert not report["matrix_level_during"]
    assert report["down_s"] >= OUTAGE
    assert during["api"]["state"] == "stale", during
    assert during["api"]["versions_behind"] > 0
    assert any(reason.startswith("matrix behind") for reason in during["api"]["reasons"]), during
    assert (during["banner"], during["metric"]) == (["stale"], ["stale"])
    assert during["ready_broker"] == "fail"
    assert during["ready_freshness"]["state"] == "stale"
    # Up again: by itself, every process still running.
    assert report["live_after_s"] is not None, log
    assert (after["api"]["state"], after["banner"], after["metric"]) == ("live", ["live"], ["live"])
    assert (after["ready_status"], after["ready_broker"]) == (200, "ok")
    assert report["processes_restarted"] == [], log
    assert report["inventory_equals_cluster"], (report["inventory_missing"], report["inventory_extra"])
    assert report["matrix_differences"] == 0, report["matrix_difference_examples"]
