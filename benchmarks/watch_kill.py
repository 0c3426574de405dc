"""From a watch worker's SIGKILL to "stale" on every surface, and back to "live".

    python -m benchmarks.watch_kill [--lease 60] [--database postgres|sqlite] [--report report.json]

It starts `make up` (devrun --production) against a live cluster served by the fake Kubernetes
API with OME_WATCH_LEASE set to --lease, waits until the cluster is live, SIGKILLs the watch
worker (it gives no lease back; devrun starts it again, and the new one's hub takes the watches
once the dead hub's announcement lapsed, or the leases, whichever comes first), and polls what
the surfaces say over HTTP (benchmarks.redis_outage.surfaces: the cells' freshness, the matrix
page's banner, /metrics, /readyz) until every kind is watched under a lease of another hub (and
whether all said `stale` meanwhile), then until all say `live` again. It prints the seconds as
JSON (docs/operations.md, "Freshness"), and writes the report to --report;
tests/ops/test_watch_kill.py asserts it.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.burst import cluster_objects, setup_django
from benchmarks.cli import fault_run_parser, finish_fault_run
from benchmarks.django_setup import throwaway_database
from benchmarks.redis_outage import METRICS_TOKEN, surfaces
from benchmarks.stack import Stack, wait_for
from tests.fakes.kube_api import FakeKubeAPI


def said_everywhere(stack: Stack, state: str) -> bool:
    return everywhere(surfaces(stack), state)


def everywhere(said: dict[str, Any], state: str) -> bool:
    return bool(said["api"]) and said["api"]["state"] == state and said["banner"] == said["metric"] == [state]


def watched_elsewhere(dead: str) -> bool:
    """Every kind of the cluster watched (connected) under a lease of a hub not of process `dead`
    (host:pid; inventory.tasks.watch_hub adds a random part to the hub id)."""
    from inventory.live.shares import owner_hub
    from inventory.models import Kind, SyncState

    states = SyncState.objects.filter(cluster__name="live", watch_connected=True).values_list("watch_owner", flat=True)
    hubs = [owner_hub(owner) for owner in states]
    return len(hubs) == len(Kind.values) and all(hub and hub.rpartition(":")[0] != dead for hub in hubs)


def run(args: argparse.Namespace) -> dict[str, Any]:
    fake = FakeKubeAPI().start()
    for obj in cluster_objects():
        fake.create(obj)
    report: dict[str, Any] = {"lease_s": args.lease, "database": args.database}
    os.environ.update(API_ANONYMOUS_READ="true", METRICS_TOKEN=METRICS_TOKEN)
    with tempfile.TemporaryDirectory(prefix="ome-watch-kill-") as folder, throwaway_database(args.database) as (url, _):
        setup_django(url)
        kubeconfig = fake.write_kubeconfig(Path(folder) / "live.yaml")
        settings = {"OME_WATCH_LEASE": f"{args.lease:g}", "MATRIX_POLL_SECONDS": "1"}
        stack = Stack(Path(folder), database_url=url, kubeconfig=kubeconfig, settings=settings)
        try:
            stack.wait_ready()
            report["live_before"] = wait_for(lambda: said_everywhere(stack, "live"), timeout=180) is not None
            victim = stack.children()["watch-worker"]
            os.kill(victim, signal.SIGKILL)
            killed = time.monotonic()

            def taken_over() -> bool:  # noting whether every surface said stale meanwhile
                said = surfaces(stack)
                if "stale_said" not in report and everywhere(said, "stale"):
                    report["stale_after_kill_s"] = round(time.monotonic() - killed, 1)
                    report["stale_said"] = said
                return watched_elsewhere(f"{socket.gethostname()}:{victim}")

            taken = wait_for(taken_over, timeout=3 * args.lease + 120)
            report["taken_over_after_kill_s"] = round(time.monotonic() - killed, 1) if taken is not None else None
            report.setdefault("stale_after_kill_s", None)
            live = wait_for(lambda: said_everywhere(stack, "live"), timeout=3 * args.lease + 120)
            report["live_again_after_kill_s"] = round(time.monotonic() - killed, 1) if live is not None else None
        finally:
            stack.stop()
            fake.stop()
            report["stack_log_tail"] = stack.output.lines[-20:]
    return report


def main(argv: list[str] | None = None) -> int:
    parser = fault_run_parser("watch_kill", __doc__)
    parser.add_argument("--lease", type=float, default=60.0, help="OME_WATCH_LEASE (default 60, as deployed)")
    args = parser.parse_args(argv)
    return finish_fault_run(run(args), args.report)


if __name__ == "__main__":
    sys.exit(main())
