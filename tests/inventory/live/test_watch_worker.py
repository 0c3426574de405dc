"""A real Celery watch worker (its own process, as deployed: `-Q watch --pool threads`) holds the
watches of many clusters with a bounded number of threads, and when it is killed (SIGKILL: no
leases given back) a restarted worker takes the watches over once the leases lapse and applies
what changed meanwhile. SIGTERM ends the watches and gives the leases back.

The worker uses its own SQLite file (the test reads it with sqlite3) and its own Redis database.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from django.conf import settings

from inventory.models import Kind
from tests.fakes.kube_api import FakeKubeFleet
from tests.inventory.live.objects import model, one_of_each
from tests.support.processes import OutputWatcher, environ_without, stop_process
from tests.support.redis_server import RedisServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

CLUSTERS = 20
WATCHES = CLUSTERS * len(Kind.values)
# Celery's own threads (main, consumer, timer, pool of 2, ...), the hub's loop, its database
# threads (OME_WATCH_DB_THREADS=4) and name resolvers: a hundred watches need none of their own.
THREAD_BOUND = 24
# ensure_watches (beat's, on another worker in production) comes on a queue of its own, so
# that its messages never count as watch tasks waiting.
CONTROL_QUEUE = "watch-test-control"
WORKER_ARGS = (
    f"--queues=watch,{CONTROL_QUEUE}",
    "--pool=threads",
    "--concurrency=2",
    "--without-gossip",
    "--without-mingle",
    "--without-heartbeat",
    "--loglevel=INFO",
    "--hostname=watch-test@%h",
)


class Stack:
    def __init__(self, folder: Path, fleet: FakeKubeFleet, redis_url: str) -> None:
        self.database = folder / "db.sqlite3"
        kubeconfigs = [member.write_kubeconfig(folder / f"{name}.yaml") for name, member in fleet.members.items()]
        self.env = environ_without("DATABASE_URL", "REDIS_URL", "OME_CLUSTERS")
        self.env.update(
            DATABASE_URL=f"sqlite:///{self.database}",
            REDIS_URL=redis_url,
            OME_CLUSTERS=";".join(
                f"{name}=kubeconfig:{path}" for name, path in zip(fleet.members, kubeconfigs, strict=True)
            ),
            OME_KUBECONFIG_DIR=str(folder),  # kubeconfigs are read from this folder only
            DEBUG="true",
            # A short lease, so that a killed worker's watches lapse soon; OME_TEST_WATCH_LEASE=60
            # measures the default (docs/operations.md, "From a watch worker's death to stale").
            OME_WATCH_LEASE=os.environ.get("OME_TEST_WATCH_LEASE", "6"),
            OME_WATCH_BACKOFF_BASE="0.05",
            OME_WATCH_BACKOFF_MAX="0.5",
            MATRIX_UPDATE_ON_CHANGE="false",
            LOG_FORMAT="plain",
        )
        self.app = Celery(broker=redis_url)
        self.ensured_at = -math.inf
        self.worker: subprocess.Popen[str] | None = None

    def manage(self, *args: str) -> None:
        done = subprocess.run(
            [sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=self.env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr

    def start_worker(self) -> OutputWatcher:
        self.worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "ome_dashboard", "worker", *WORKER_ARGS],
            cwd=settings.BASE_DIR,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        output = OutputWatcher(self.worker)
        output.wait_for(r"ready\.", timeout=60)
        return output

    def ensure_watches(self) -> None:
        """What beat does every half lease (3 s here)."""
        if time.monotonic() - self.ensured_at >= 3:
            self.ensured_at = time.monotonic()
            self.app.send_task("inventory.tasks.ensure_watches", queue=CONTROL_QUEUE)

    def freshness(self) -> dict[str, dict[str, Any]]:
        """What every surface says (they all read matrix.freshness), as `manage.py freshness` says it."""
        done = subprocess.run(
            [sys.executable, "manage.py", "freshness", "--json"],
            cwd=settings.BASE_DIR,
            env=self.env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return dict(json.loads(done.stdout.splitlines()[-1]))  # after any log lines

    def query(self, sql: str) -> list[tuple]:
        with contextlib.closing(sqlite3.connect(self.database, timeout=20)) as connection:
            return connection.execute(sql).fetchall()

    def threads(self) -> int:
        assert self.worker is not None
        status = Path(f"/proc/{self.worker.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:")))

    def stop_worker(self, sig: int) -> int | None:
        """The worker's exit code after `sig`; None when it had not ended within 30 s."""
        assert self.worker is not None
        return stop_process(self.worker, timeout=30, sig=sig)


def wait_until(check: Callable[[], bool], *, timeout: float = 180, every: Callable[[], None] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not reached in time"
        if every is not None:
            every()
        time.sleep(0.5)  # polling another process's database


@pytest.fixture
def stack(tmp_path: Path, redis_server: RedisServer) -> Iterator[tuple[Stack, FakeKubeFleet]]:
    with FakeKubeFleet([f"c{index:03}" for index in range(CLUSTERS)]) as fleet:
        for member in fleet.members.values():
            for obj in one_of_each():
                member.create(obj)
        stack = Stack(tmp_path, fleet, redis_server.url.rsplit("/", 1)[0] + "/7")
        stack.manage("migrate", "--verbosity=0")
        stack.manage("register_clusters")
        try:
            yield stack, fleet
        finally:
            if stack.worker is not None and stack.worker.poll() is None:
                stack.stop_worker(signal.SIGKILL)


def connected(stack: Stack) -> int:
    return int(stack.query("SELECT count(*) FROM inventory_syncstate WHERE watch_connected")[0][0])


def stored(stack: Stack) -> set[tuple[str, str, str, str]]:
    return set(
        stack.query(
            "SELECT c.name, r.kind, r.namespace, r.name FROM inventory_resource r "
            "JOIN inventory_cluster c ON c.id = r.cluster_id"
        )
    )


def served(fleet: FakeKubeFleet) -> set[tuple[str, str, str, str]]:
    return {
        (name, obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        for name, member in fleet.members.items()
        for kind in Kind.values
        for obj in member.objects(kind)
    }


def test_a_watch_worker_holds_many_clusters_with_few_threads_and_a_restarted_one_resumes(stack) -> None:
    stack, fleet = stack
    stack.start_worker()
    stack.ensure_watches()
    wait_until(lambda: connected(stack) == WATCHES)

    # Each stream ends after half a lease (3 s) and is asked for again at once.
    wait_until(lambda: fleet.active_watches() == WATCHES)
    threads = stack.threads()
    assert threads <= THREAD_BOUND, f"{threads} threads hold {WATCHES} watches"
    assert stored(stack) == served(fleet)

    assert stack.stop_worker(signal.SIGKILL) == -signal.SIGKILL
    for index, member in enumerate(fleet.members.values()):
        member.create(model(f"while-down-{index}"))
        member.delete("clusterbasemodels", "llama")
    stack.start_worker()
    wait_until(lambda: stored(stack) == served(fleet), every=stack.ensure_watches)
    wait_until(lambda: connected(stack) == WATCHES, every=stack.ensure_watches)

    held = {owner for (owner,) in stack.query("SELECT watch_owner FROM inventory_syncstate WHERE watch_connected")}
    assert stack.stop_worker(signal.SIGTERM) == 0
    after = stack.query("SELECT watch_owner, watch_connected FROM inventory_syncstate")
    assert not any(connected for _, connected in after)
    # Every lease the worker held is given back (a claim still queued at the end would lapse).
    assert held.isdisjoint(owner for owner, _ in after)
    assert fleet.wait_for_no_watches(timeout=10)
    assert not fleet.all_errors()


def test_a_watch_worker_killed_in_the_middle_of_a_burst_leaves_nothing_half_stored(stack) -> None:
    stack, fleet = stack
    stack.start_worker()
    stack.ensure_watches()
    wait_until(lambda: connected(stack) == WATCHES)
    burst, member = 3000, fleet["c000"]

    for index in range(burst):  # faster than the worker stores them: they queue up in its watch
        member.create(model(f"burst-{index}"))
    deadline = time.monotonic() + 60
    while not (seen := burst_stored(stack)) and time.monotonic() < deadline:
        time.sleep(0.02)  # polling another process's database
    assert stack.stop_worker(signal.SIGKILL) == -signal.SIGKILL
    at_kill = burst_stored(stack)
    for index in range(burst, burst + 100):  # and more while no worker runs
        member.create(model(f"burst-{index}"))
    stack.start_worker()
    wait_until(lambda: stored(stack) == served(fleet), every=stack.ensure_watches)

    assert 0 < seen <= at_kill < burst, "the worker was killed with part of the burst stored"
    counts = stack.query(
        "SELECT s.count FROM inventory_syncstate s JOIN inventory_cluster c ON c.id = s.cluster_id "
        "WHERE c.name = 'c000' AND s.kind = 'ClusterBaseModel'"
    )
    assert counts == [(len(member.objects("ClusterBaseModel")),)]
    assert not fleet.all_errors()


def states(stack: Stack) -> set[str]:
    return {entry["state"] for entry in stack.freshness().values()}


def test_a_killed_watch_worker_reads_stale_within_its_lease_and_a_stopped_one_at_once(stack) -> None:
    stack, fleet = stack
    stack.start_worker()
    stack.ensure_watches()
    wait_until(lambda: connected(stack) == WATCHES and stored(stack) == served(fleet))
    stack.manage("recompute_matrix", "--all")
    wait_until(lambda: states(stack) == {"live"}, every=stack.ensure_watches)

    assert stack.stop_worker(signal.SIGKILL) == -signal.SIGKILL
    killed_at, started = datetime.now(UTC), time.monotonic()
    wait_until(lambda: states(stack) == {"stale"})
    noticed = time.monotonic() - started
    said = stack.freshness()

    lease = float(stack.env["OME_WATCH_LEASE"])
    for entry in said.values():
        assert all("worker down" in reason for reason in entry["reasons"])
        # Stale from the moment the last renewal runs out: at most one lease after the death.
        assert (datetime.fromisoformat(entry["since"]) - killed_at).total_seconds() <= lease
    print(f"\nSIGKILLed watch worker read as stale after {noticed:.1f} s (lease {lease:g} s)")

    stack.start_worker()
    wait_until(lambda: states(stack) == {"live"}, every=stack.ensure_watches)
    assert stack.stop_worker(signal.SIGTERM) == 0
    after = stack.freshness()
    assert {entry["state"] for entry in after.values()} == {"stale"}
    assert all(reason.startswith("watch lost") for entry in after.values() for reason in entry["reasons"])


def burst_stored(stack: Stack) -> int:
    return int(stack.query("SELECT count(*) FROM inventory_resource WHERE name LIKE 'burst-%'")[0][0])
