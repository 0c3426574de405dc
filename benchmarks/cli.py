"""Command-line plumbing the benchmarks share: the fault runs' (burst, redis_outage, watch_kill)
`--database` / `--report` and their JSON output, and the live-fleet runs' (many_clusters,
scale_out) arguments and services (a real Redis, a throwaway database, Django set up on both)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.django_setup import default_database, setup_django, throwaway_database
from tests.support.redis_server import RedisServer

DATABASES = ("postgres", "sqlite")
# A report's key holding the stack's last log lines: written to --report, left out of what is printed.
LOG_TAIL = "stack_log_tail"


def fault_run_parser(module: str, doc: str) -> argparse.ArgumentParser:
    """`python -m benchmarks.MODULE` with --database and --report; the caller adds its own arguments."""
    parser = argparse.ArgumentParser(prog=f"python -m benchmarks.{module}", description=doc.split("\n\n")[0])
    parser.add_argument("--database", choices=DATABASES, default=default_database())
    parser.add_argument("--report", type=Path, help="also write the report here as JSON")
    return parser


def finish_fault_run(report: dict[str, Any], path: Path | None) -> int:
    """Write the whole report to `path` (when given), print it without the stack's log tails, and
    return the exit status."""
    if path:
        path.write_text(json.dumps(report, indent=2, default=str))
    print(json.dumps(_without_log_tails(report), indent=2, default=str))
    return 0


def _without_log_tails(report: dict[str, Any]) -> dict[str, Any]:
    return {
        key: _without_log_tails(value) if isinstance(value, dict) else value
        for key, value in report.items()
        if key != LOG_TAIL
    }


def fleet_parser(doc: str, *, clusters: int, models: int, runtimes: int, changes: int) -> argparse.ArgumentParser:
    """A live-fleet run's arguments with its defaults; the caller adds its own."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--clusters", type=int, default=clusters)
    parser.add_argument("--models", type=int, default=models)
    parser.add_argument("--runtimes", type=int, default=runtimes)
    parser.add_argument(
        "--changes", type=int, default=changes, help="changes made, timed until they show in the matrix"
    )
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--database", choices=DATABASES, default=default_database())
    return parser


@contextlib.contextmanager
def fleet_services(database: str, *, prefix: str) -> Iterator[tuple[Path, str, str]]:
    """A new folder, a real Redis and a throwaway `database` ("postgres" or "sqlite"), with Django
    set up on them; yields the folder, the database's description and the Redis URL. Clusters are
    registered with kubeconfigs from the folder's kubeconfigs/ only (as in production)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ["OME_KUBECONFIG_DIR"] = str(folder / "kubeconfigs")
    redis = RedisServer(data_dir=folder / "redis")
    redis.start()
    os.environ["REDIS_URL"] = redis.url
    try:
        with throwaway_database(database) as (url, _):
            os.environ["DATABASE_URL"] = url
            yield folder, setup_django(), redis.url
    finally:
        redis.stop()
