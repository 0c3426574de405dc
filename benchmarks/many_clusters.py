"""Benchmark of many live clusters held by one watch worker (issue 10): 100 clusters x 200 objects
(150 models, 50 runtimes, clones of the bundled catalog) served by one FakeKubeFleet (a path
prefix per cluster) in a child process; a real Redis; a Celery watch worker (`-Q watch --pool
threads --concurrency 2`, the watch hub) and a Celery worker for every other queue (matrix
updates), each in its own process, as deployed.

Prints: the time from the first ensure_watches until every cluster's inventory is complete, and
until every cluster has a full matrix level with its inventory; then, for changes made one at a
time in random clusters, the time until the change shows in that cluster's matrix (p50, p95,
max); and the watch worker's thread count and memory. Asserts nothing.

Runs on a throwaway PostgreSQL server (tests/ops/pg.py) where one can be started, else on a
fresh SQLite file. Run: `python -m benchmarks.many_clusters [--clusters N --models N --runtimes N
--changes N --database postgres|sqlite]`.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.cli import fleet_parser, fleet_services
from tests.support.processes import stop_process

REPO = Path(__file__).resolve().parent.parent
# Seconds between looks at the database (another process writes it): often while timing one
# change, seldom while waiting for the whole fleet (the fake servers share this process's GIL).
POLL_CHANGE, POLL_FLEET = 0.02, 0.5


def proc_status(pid: int) -> dict[str, str]:
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return {key: value.strip() for key, _, value in (line.partition(":") for line in lines)}


class Worker:
    """A Celery worker process; its thread count is sampled by `sample()`."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "ome_dashboard",
                "worker",
                f"--hostname={name}@%h",
                "--loglevel=INFO",
                *args,
            ],
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
        )
        self.peak_threads = 0

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while "ready." not in self.log.read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"worker {self.name} did not start (exit {self.proc.poll()}):\n{self.log.read_text()}"
                )
            time.sleep(0.1)

    def sample(self) -> None:
        self.peak_threads = max(self.peak_threads, int(proc_status(self.proc.pid)["Threads"]))

    def figures(self) -> str:
        status = proc_status(self.proc.pid)
        return (
            f"{self.name}: threads {status['Threads']} now, {self.peak_threads} at most; "
            f"RSS {status['VmRSS']} now, {status['VmHWM']} at most"
        )

    def stop(self) -> None:
        stop_process(self.proc, timeout=60)


def wait(check: Callable[[], bool], workers: list[Worker], timeout: float, poll: float = POLL_CHANGE) -> float:
    """Seconds until check() holds (sampling the workers meanwhile); raises on timeout."""
    started = time.perf_counter()
    while not check():
        for worker in workers:
            worker.sample()
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"not reached within {timeout} s")
        time.sleep(poll)
    return time.perf_counter() - started


def main() -> None:
    parser = fleet_parser(__doc__, clusters=100, models=150, runtimes=50, changes=60)
    args = parser.parse_args()
    with fleet_services(args.database, prefix="ome-bench-clusters-") as (folder, database, redis_url):
        run(args, folder, database, redis_url)


def run(args: argparse.Namespace, folder: Path, database: str, redis_url: str) -> None:
    from django.conf import settings

    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory.models import Cluster, Kind, SyncState
    from inventory.tasks import WATCH_QUEUE
    from ome_dashboard.celery import app

    runtimes = synthetic_runtimes(args.runtimes)
    models = synthetic_models(args.models, runtimes, signatures=min(40, args.models))
    objects = len(models) + len(runtimes)
    print(f"database: {database}")
    print(f"{args.clusters} clusters x {objects} objects ({len(models)} models, {len(runtimes)} runtimes)")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")

    fleet = Fleet(args.clusters, models + runtimes, folder)
    clusters = {
        name: Cluster.objects.create(name=name, source=Cluster.Source.KUBECONFIG, kubeconfig=str(path))
        for name, path in fleet.kubeconfigs.items()
    }

    env = {**os.environ, "MATRIX_UPDATE_ON_CHANGE": "true", "LOG_FORMAT": "plain", "REDIS_URL": redis_url}
    env["PYTHONUNBUFFERED"] = "1"  # the logs are files, read for the "ready." line
    other_queues = sorted(_queues(settings, app.conf.task_default_queue) - {WATCH_QUEUE})
    watcher = Worker(
        "watch-worker",
        ["--queues=watch", "--pool=threads", "--concurrency=2", "--without-gossip", "--without-mingle"],
        env,
        folder / "watch-worker.log",
    )
    matrix = Worker(
        "matrix-worker",
        [f"--queues={','.join(other_queues)}", "--concurrency=2", "--without-gossip", "--without-mingle"],
        env,
        folder / "worker.log",
    )
    workers = [watcher, matrix]
    try:
        for worker in workers:
            worker.wait_ready()
        status = proc_status(watcher.proc.pid)
        print(f"watch worker before any watch: threads {status['Threads']}, RSS {status['VmRSS']}")
        first_full(args, clusters, workers, objects)
        change_latency(args, fleet, clusters, workers)
        print(watcher.figures())
        connected = SyncState.objects.filter(watch_connected=True).count()
        print(f"watches connected: {connected} ({args.clusters} clusters x {len(Kind.values)} kinds)")
    finally:
        for worker in workers:
            worker.stop()
        fleet.stop()
    print(f"logs: {folder}")


class Fleet:
    """`python -m tests.fakes.kube_api --clusters N` in a child process (its threads must not
    share a GIL with this one's polling), changed through its HTTP API like a real cluster."""

    def __init__(self, count: int, objects: list[dict[str, Any]], folder: Path) -> None:
        manifests = folder / "objects.json"
        manifests.write_text(json.dumps(objects))
        kubeconfigs = folder / "kubeconfigs"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.fakes.kube_api",
                f"--clusters={count}",
                f"--manifests={manifests}",
                f"--kubeconfig-out={kubeconfigs}",
            ],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        for line in self.proc.stdout:
            if line.startswith("loaded "):
                break
        else:
            raise RuntimeError(f"the fake API servers exited with {self.proc.wait()}")
        self.kubeconfigs = {f"c{index:03}": kubeconfigs / f"c{index:03}.yaml" for index in range(count)}

    def patch(self, cluster: str, plural: str, name: str, patch: dict[str, Any]) -> None:
        request = urllib.request.Request(
            f"{self.url}{cluster}/apis/ome.io/v1beta1/{plural}/{name}",
            data=json.dumps(patch).encode(),
            method="PATCH",
            headers={"Content-Type": "application/merge-patch+json", "Authorization": "Bearer test-token"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def _queues(settings: Any, default: str) -> set[str]:
    routes = settings.CELERY_TASK_ROUTES
    named = {route["queue"] for route in routes.values() if isinstance(route, dict) and "queue" in route}
    return named | {default}


def first_full(args: argparse.Namespace, clusters: dict[str, Any], workers: list[Worker], objects: int) -> None:
    from django.conf import settings

    from inventory.models import Kind, Resource, SyncState
    from matrix.services import matrix_is_level
    from ome_dashboard.celery import app

    started = time.perf_counter()
    app.send_task("inventory.tasks.ensure_watches")
    ticked = [started]

    def inventories_complete() -> bool:
        if time.perf_counter() - ticked[-1] > settings.OME_WATCH_LEASE / 2:  # as beat does
            ticked.append(time.perf_counter())
            app.send_task("inventory.tasks.ensure_watches")
        listed = SyncState.objects.filter(last_list_at__isnull=False, watch_connected=True).count()
        return listed == len(clusters) * len(Kind.values) and Resource.objects.count() == len(clusters) * objects

    waited = wait(inventories_complete, workers, args.timeout, POLL_FLEET)
    print(
        f"every inventory complete, every watch connected: {waited:.1f} s after ensure_watches "
        f"({len(ticked)} ensure_watches ticks)"
    )

    pending = dict(clusters)

    def matrices_level() -> bool:
        for name, cluster in list(pending.items()):
            if matrix_is_level(cluster):
                del pending[name]
        return not pending

    wait(matrices_level, workers, args.timeout, POLL_FLEET)
    print(f"first full matrix of every cluster: {time.perf_counter() - started:.1f} s after ensure_watches")


def change_latency(args: argparse.Namespace, fleet: Any, clusters: dict[str, Any], workers: list[Worker]) -> None:
    """Change one model at a time in a random cluster: a model whose row selects a runtime gets a
    format nobody serves; time until the cluster's current build shows it with no runtime."""
    from matrix.models import MatrixRow
    from matrix.selectors import current_build

    rng = random.Random(7)
    latencies = []
    for index in range(args.changes):
        name = rng.choice(sorted(clusters))
        cluster = clusters[name]
        selected = MatrixRow.objects.filter(
            build=current_build(cluster), namespace="", outcome="selected", model__kind="ClusterBaseModel"
        ).values_list("model__name", flat=True)
        target = rng.choice(sorted(selected))
        started = time.perf_counter()
        fleet.patch(name, "clusterbasemodels", target, {"spec": {"modelFormat": {"name": f"bench-unknown-{index}"}}})
        wait(functools.partial(_shows_no_runtime, cluster, target), workers, args.timeout)
        latencies.append(time.perf_counter() - started)
    latencies.sort()
    p95 = latencies[max(0, math.ceil(len(latencies) * 0.95) - 1)]
    print(
        f"a change reflected in its cluster's matrix ({len(latencies)} changes, one at a time): "
        f"p50 {statistics.median(latencies):.2f} s, p95 {p95:.2f} s, max {latencies[-1]:.2f} s"
    )


def _shows_no_runtime(cluster: Any, model_name: str) -> bool:
    return _outcome(cluster, model_name) == "no-runtime"


def _outcome(cluster: Any, model_name: str) -> str | None:
    from matrix.models import MatrixRow
    from matrix.selectors import current_build

    build = current_build(cluster)
    if build is None:
        return None
    row = MatrixRow.objects.filter(build=build, model__name=model_name, namespace="").only("outcome").first()
    return row.outcome if row is not None else None


if __name__ == "__main__":
    main()
