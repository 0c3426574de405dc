"""Scale-out benchmark (issue 25): many live clusters watched by several watch workers, their
matrices kept by several matrix workers, and one watch worker killed.

200 clusters (by default) served by one FakeKubeFleet in a child process; a real Redis; N watch
workers (`-Q watch --pool threads`, each with its watch hub) and M matrix workers (every other
queue, prefork), real Celery processes as deployed; ensure_watches sent every half lease, as beat
does. Which worker watches what is read from both ends: the fake fleet lists its open watch
streams with the client's port, and /proc says which worker process owns that port.

Prints: the distribution of clusters per watch worker (and any kind watched twice), the matrix
tasks run by each matrix worker; then it SIGKILLs the first watch worker, changes a model in some
of its clusters, and prints the time until every one of its clusters is watched by the others,
until the changes show in the matrices, and whether every matrix equals a full rebuild.
Asserts nothing.

Run: `python -m benchmarks.scale_out [--clusters 200 --watch-workers 2 --matrix-workers 2
--lease 60 --changes 20 --database postgres|sqlite]` (the plumbing is benchmarks.many_clusters').
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import sys
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.cli import fleet_parser, fleet_services
from benchmarks.many_clusters import POLL_FLEET, Fleet, Worker, _outcome, _queues, wait

# A matrix task (named matrix.*) that a worker logged as done.
MATRIX_TASK = re.compile(r"Task (matrix\.\w+)\[[^]]+\] succeeded")


def main() -> None:
    parser = fleet_parser(__doc__, clusters=200, models=20, runtimes=10, changes=20)
    parser.add_argument("--watch-workers", type=int, default=2)
    parser.add_argument("--matrix-workers", type=int, default=2)
    parser.add_argument("--lease", type=int, default=60, help="OME_WATCH_LEASE, seconds (as in production)")
    args = parser.parse_args()
    # Stopped with SIGTERM, it still stops its workers, servers and database (the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    os.environ["OME_WATCH_LEASE"] = str(args.lease)
    with fleet_services(args.database, prefix="ome-bench-scale-out-") as (folder, database, _):
        run(args, folder, database)


def run(args: argparse.Namespace, folder: Path, database: str) -> None:
    from django.conf import settings

    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory.models import Cluster
    from inventory.tasks import WATCH_QUEUE
    from ome_dashboard.celery import app

    runtimes = synthetic_runtimes(args.runtimes)
    models = synthetic_models(args.models, runtimes, signatures=min(40, args.models))
    print(f"database: {database}")
    print(
        f"{args.clusters} clusters x {len(models) + len(runtimes)} objects; {args.watch_workers} watch workers, "
        f"{args.matrix_workers} matrix workers; lease {args.lease} s"
    )
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")
    fleet = Fleet(args.clusters, models + runtimes, folder)
    clusters = {
        name: Cluster.objects.create(name=name, source=Cluster.Source.KUBECONFIG, kubeconfig=str(path))
        for name, path in fleet.kubeconfigs.items()
    }
    env = {**os.environ, "MATRIX_UPDATE_ON_CHANGE": "true", "LOG_FORMAT": "plain", "PYTHONUNBUFFERED": "1"}
    queues = ",".join(sorted(_queues(settings, app.conf.task_default_queue) - {WATCH_QUEUE}))
    watchers = [
        Worker(
            f"watch-{index}",
            ["--queues=watch", "--pool=threads", "--concurrency=2", "--without-gossip", "--without-mingle"],
            env,
            folder / f"watch-{index}.log",
        )
        for index in range(args.watch_workers)
    ]
    matrix = [
        Worker(
            f"matrix-{index}",
            [f"--queues={queues}", "--concurrency=1", "--without-gossip", "--without-mingle"],
            env,
            folder / f"matrix-{index}.log",
        )
        for index in range(args.matrix_workers)
    ]
    workers = [*watchers, *matrix]
    beat = Beat(args.lease / 2)
    try:
        for worker in workers:
            worker.wait_ready()
        beat.start()
        started = time.perf_counter()
        waited = wait(lambda: _all_watched(clusters), workers, args.timeout, POLL_FLEET)
        print(f"every kind of every cluster watched: {waited:.1f} s after the first ensure_watches")
        wait(lambda: _all_level(clusters), workers, args.timeout, POLL_FLEET)
        print(f"every matrix level: {time.perf_counter() - started:.1f} s after the first ensure_watches")
        held = _print_distribution(fleet, watchers, args.lease)
        _print_matrix_tasks(matrix)
        survivors = takeover(args, fleet, clusters, watchers, workers, held)
        if survivors:
            comeback(args, fleet, clusters, survivors, env, folder)
    finally:
        beat.stop()
        for worker in workers:
            if worker.proc.poll() is None:
                worker.stop()
        fleet.stop()
    print(f"load average {os.getloadavg()[0]:.1f} at the end; logs: {folder}")


class Beat(threading.Thread):
    """Sends ensure_watches every half lease, as beat does (CELERY_BEAT_SCHEDULE)."""

    def __init__(self, period: float) -> None:
        super().__init__(name="beat", daemon=True)
        self.period, self._stopped = period, threading.Event()

    def run(self) -> None:
        from ome_dashboard.celery import app

        while True:
            app.send_task("inventory.tasks.ensure_watches")
            if self._stopped.wait(self.period):
                return

    def stop(self) -> None:
        self._stopped.set()


def takeover(
    args: argparse.Namespace,
    fleet: Fleet,
    clusters: dict[str, Any],
    watchers: list[Worker],
    workers: list[Worker],
    held: dict[str, set[str]],
) -> list[Worker]:
    """SIGKILL the first watch worker, change models in its clusters meanwhile, and time the
    takeover; returns the surviving watch workers."""
    victim, survivors = watchers[0], watchers[1:]
    orphans = sorted(held.get(victim.name, set()))
    if not orphans or not survivors:
        print("takeover: not measured (the first watch worker holds no cluster, or no other is running)")
        return []
    before = _watching(clusters)
    killed = time.perf_counter()
    victim.proc.send_signal(signal.SIGKILL)
    victim.proc.wait(30)
    rng = random.Random(25)
    changed = {}
    for index, name in enumerate(rng.sample(orphans, min(args.changes, len(orphans)))):
        target = _selected_model(clusters[name], rng)
        if target is not None:
            fleet.patch(name, "clusterbasemodels", target, {"spec": {"modelFormat": {"name": f"moved-{index}"}}})
            changed[name] = target
    orphaned = {key: owner for key, owner in before.items() if key[0] in {clusters[name].pk for name in orphans}}
    alive = [worker for worker in workers if worker is not victim]

    def taken_over() -> bool:
        now = _watching(clusters)
        return all(now.get(key, owner) != owner for key, owner in orphaned.items())

    wait(taken_over, alive, args.timeout, POLL_FLEET)
    print(
        f"takeover: {victim.name} (watching {len(orphans)} clusters) SIGKILLed; all {len(orphaned)} of its watches "
        f"held again by the others after {time.perf_counter() - killed:.1f} s "
        f"(lease {args.lease} s, ensure_watches every {args.lease / 2:g} s)"
    )

    def changes_shown() -> bool:
        return all(_outcome(clusters[name], model) == "no-runtime" for name, model in changed.items())

    wait(changes_shown, alive, args.timeout, POLL_FLEET)
    wait(lambda: _all_level(clusters), alive, args.timeout, POLL_FLEET)
    print(
        f"the {len(changed)} changes made during the takeover shown in their matrices, every matrix level: "
        f"{time.perf_counter() - killed:.1f} s after the kill"
    )
    differing = _matrices_differing(clusters)
    print(f"matrices equal to a full rebuild: {len(clusters) - len(differing)} of {len(clusters)} {differing[:5]}")
    _print_distribution(fleet, survivors, args.lease)
    return survivors


def comeback(
    args: argparse.Namespace,
    fleet: Fleet,
    clusters: dict[str, Any],
    survivors: list[Worker],
    env: dict[str, str],
    folder: Path,
) -> None:
    """Start the killed worker again: time until it watches its fair share of the clusters."""
    from inventory.live.shares import fair_share

    watch_args = ["--queues=watch", "--pool=threads", "--concurrency=2", "--without-gossip", "--without-mingle"]
    again = Worker("watch-0-again", watch_args, env, folder / "watch-0-again.log")
    watchers = [again, *survivors]
    share = fair_share(len(clusters), len(watchers))
    try:
        again.wait_ready()
        started = time.perf_counter()

        wanted = len(clusters) - share * len(survivors)
        deadline = started + max(args.timeout / 3, 6 * args.lease)
        # Looked at over half a lease at a time: a watch reopens its stream every half lease.
        while len(_observe(fleet, [again], args.lease / 2 + 1)[0][again.name]) < wanted:
            if time.perf_counter() > deadline:
                print(f"restarted watch worker did not get its share within {time.perf_counter() - started:.0f} s")
                break
        else:
            print(
                f"restarted watch worker watching its share ({wanted} clusters or more) "
                f"{time.perf_counter() - started:.0f} s after it was ready (looked at every {args.lease / 2 + 1:g} s)"
            )
        _print_distribution(fleet, watchers, args.lease)
    finally:
        again.stop()


def _selected_model(cluster: Any, rng: random.Random) -> str | None:
    from matrix.models import MatrixRow
    from matrix.selectors import current_build

    selected = MatrixRow.objects.filter(
        build=current_build(cluster), namespace="", outcome="selected", model__kind="ClusterBaseModel"
    ).values_list("model__name", flat=True)
    names = sorted(selected)
    return rng.choice(names) if names else None


def _watches(fleet: Fleet) -> list[tuple[str, str, int]]:
    root = fleet.url.split("/clusters/")[0]
    with urllib.request.urlopen(f"{root}/fleet/watches", timeout=30) as response:
        return [tuple(watch) for watch in json.load(response)["watches"]]  # type: ignore[misc]


def _watching(clusters: dict[str, Any]) -> dict[tuple[int, str], str]:
    """(cluster id, kind) -> lease owner of every kind watched now (connected, lease in time)."""
    from django.utils import timezone

    from inventory.models import SyncState

    watched = SyncState.objects.filter(
        cluster__in=clusters.values(), watch_connected=True, watch_lease_until__gt=timezone.now()
    )
    return {(cluster, kind): owner for cluster, kind, owner in watched.values_list("cluster_id", "kind", "watch_owner")}


def _all_watched(clusters: dict[str, Any]) -> bool:
    from inventory.models import Kind

    return len(_watching(clusters)) == len(clusters) * len(Kind.values)


def _all_level(clusters: dict[str, Any]) -> bool:
    from matrix.services import matrix_is_level

    return all(matrix_is_level(cluster) for cluster in clusters.values())


def _matrices_differing(clusters: dict[str, Any]) -> list[str]:
    from tests.support.matrix import matrix_differences

    return [name for name, cluster in clusters.items() if matrix_differences(cluster)]


def _print_distribution(fleet: Fleet, watchers: list[Worker], lease: float) -> dict[str, set[str]]:
    """Print (and return) the clusters each watch worker streams from, seen over half a lease
    (a watch opens its stream again every half lease, so one look misses some), with the kinds
    seen streamed twice at once and the clusters seen streamed by two workers."""
    held, twice = _observe(fleet, watchers, lease / 2 + 1)
    known = [got for name, got in held.items() if name != "another process"]
    split = [cluster for cluster in set().union(*known) if sum(cluster in got for got in known) > 1]
    shares = ", ".join(f"{name} {len(got)}" for name, got in held.items())
    print(
        f"clusters per watch worker: {shares}; kinds streamed twice at once: {len(twice)}; clusters split: {len(split)}"
    )
    return held


def _observe(fleet: Fleet, watchers: list[Worker], seconds: float) -> tuple[dict[str, set[str]], set[Any]]:
    """The clusters each worker streamed from over `seconds`, and the kinds streamed twice at once."""
    held: dict[str, set[str]] = {worker.name: set() for worker in watchers}
    twice = set()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        watches = _watches(fleet)  # before the ports: a stream opened in between is not "unknown"
        owner = {port: worker.name for worker in watchers for port in _tcp_ports(worker.proc.pid)}
        twice |= {key for key, count in Counter((c, p) for c, p, _ in watches).items() if count > 1}
        for cluster, _, port in watches:
            held.setdefault(owner.get(port, "another process"), set()).add(cluster)
        time.sleep(POLL_FLEET)
    return held, twice


def _print_matrix_tasks(matrix: list[Worker]) -> None:
    for worker in matrix:
        tasks = Counter(MATRIX_TASK.findall(worker.log.read_text()))
        listed = ", ".join(f"{name.rsplit('.', 1)[1]} {count}" for name, count in tasks.most_common())
        print(f"matrix tasks run by {worker.name}: {sum(tasks.values())} ({listed})")


def _tcp_ports(pid: int) -> set[int]:
    """Local TCP ports of the sockets process `pid` holds open (from /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


if __name__ == "__main__":
    main()
