"""Redis SIGKILLed while changes flow, kept down longer than every retry budget, started again:
what every surface says meanwhile, and whether everything is right afterwards.

    python -m benchmarks.redis_outage [--outage 20] [--database postgres|sqlite] [--report report.json]

It starts `make up` (devrun --production: gunicorn, the four workers, beat) on a Redis of its own
(so that it stays down: devrun would start its own again at once), against a live cluster served
by the fake Kubernetes API. Once the cluster is live it kills Redis (SIGKILL), makes changes in
the cluster while Redis is down, and reads what each surface says at the end of the outage, as
their users read them over HTTP: the cells' envelope `freshness`, the matrix page's banner,
`/metrics` and `/readyz` with the metrics token. Then it starts Redis again on the same port and
waits until the API says `live`, and compares the inventory with the cluster and the matrix with a
full rebuild. It prints (and writes to --report) the report as JSON; tests/ops/test_redis_kill.py
asserts it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.burst import (
    Burst,
    cluster_objects,
    cluster_state,
    final_checks,
    matrix_level,
    setup_django,
    stored_state,
)
from benchmarks.cli import fault_run_parser, finish_fault_run
from benchmarks.django_setup import throwaway_database
from benchmarks.stack import Stack, wait_for
from tests.fakes.kube_api import FakeKubeAPI
from tests.support.redis_server import RedisServer

METRICS_TOKEN = "redis-outage-token"
# While Redis is down the matrix cannot be updated: past this many seconds it is "stale" (matrix
# behind) on every surface. Shorter than the outage, longer than an update takes.
LAG_STALE_AFTER = 8
BANNER = re.compile(r'<div class="freshness freshness-(\w+)"')


def fetch(stack: Stack, path: str) -> tuple[int, str]:
    """One GET as a user or a probe would make it (the metrics token for /metrics and /readyz)."""
    request = urllib.request.Request(stack.base + path, headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError as error:
        return 0, str(error)


def surfaces(stack: Stack) -> dict[str, Any]:
    """What each surface says about cluster `live`."""
    status, cells = fetch(stack, "/api/v1/matrix/cells/?cluster=live&page_size=1")
    _, page = fetch(stack, "/matrix/?cluster=live")
    _, metrics = fetch(stack, "/metrics")
    ready_status, ready = fetch(stack, "/readyz")
    states = re.findall(r'^ome_cluster_freshness\{cluster="live",state="(\w+)"\} 1\.0$', metrics, re.MULTILINE)
    checks = json.loads(ready).get("checks", {}) if ready.startswith("{") else {}
    return {
        "api": json.loads(cells)["freshness"] if status == 200 else None,
        "banner": BANNER.findall(page),
        "metric": states,
        "ready_status": ready_status,
        "ready_broker": checks.get("broker", {}).get("status"),
        "ready_freshness": checks.get("freshness", {}).get("clusters", {}).get("live"),
    }


def api_state(stack: Stack) -> str | None:
    status, cells = fetch(stack, "/api/v1/matrix/cells/?cluster=live&page_size=1")
    return json.loads(cells)["freshness"]["state"] if status == 200 else None


def run(args: argparse.Namespace) -> dict[str, Any]:
    fake = FakeKubeAPI().start()
    for obj in cluster_objects():
        fake.create(obj)
    report: dict[str, Any] = {"outage_s": args.outage, "database": args.database}
    os.environ.update(
        API_ANONYMOUS_READ="true", METRICS_TOKEN=METRICS_TOKEN, MATRIX_LAG_STALE_AFTER=str(LAG_STALE_AFTER)
    )
    with tempfile.TemporaryDirectory(prefix="ome-redis-") as folder, throwaway_database(args.database) as (url, _):
        setup_django(url)
        redis = RedisServer(data_dir=Path(folder) / "redis")
        redis.start()
        kubeconfig = fake.write_kubeconfig(Path(folder) / "live.yaml")
        stack = Stack(Path(folder), database_url=url, kubeconfig=kubeconfig, redis_url=redis.url)
        try:
            stack.wait_ready()
            report["live_before"] = wait_for(lambda: api_state(stack) == "live", timeout=180) is not None
            report["before"] = surfaces(stack)
            assert redis.proc is not None
            redis.proc.kill()  # SIGKILL: no goodbye to any client
            redis.proc.wait()
            killed = time.monotonic()
            burst = Burst(fake)
            burst.run(50, 5)
            report["inventory_caught_up_while_down"] = (
                wait_for(lambda: stored_state() == cluster_state(fake), timeout=args.outage) is not None
            )
            time.sleep(max(0.0, args.outage - (time.monotonic() - killed)))  # the outage's length, not a poll
            report["during"] = surfaces(stack)
            report["matrix_level_during"] = matrix_level()
            report["down_s"] = round(time.monotonic() - killed, 1)
            redis = RedisServer(data_dir=redis.data_dir, port=redis.port)  # the same URL
            redis.start()
            restarted = time.monotonic()
            live_after = wait_for(lambda: api_state(stack) == "live", timeout=240)
            report["live_after_s"] = round(live_after, 1) if live_after is not None else None
            report["after"] = surfaces(stack)
            report["recovered_after_restart_s"] = round(time.monotonic() - restarted, 1)
            report["processes_restarted"] = re.findall(r"devrun: (\S+) (?:exited|was killed)[^\n]*", stack.output.text)
            report.update(final_checks(fake))
        finally:
            stack.stop()
            redis.stop()
            fake.stop()
            report["stack_log_tail"] = stack.output.lines[-30:]
    return report


def main(argv: list[str] | None = None) -> int:
    parser = fault_run_parser("redis_outage", __doc__)
    parser.add_argument("--outage", type=float, default=20.0, help="seconds Redis stays down (default 20)")
    args = parser.parse_args(argv)
    return finish_fault_run(run(args), args.report)


if __name__ == "__main__":
    sys.exit(main())
