"""Scale-out benchmark (issue 25): many live clusters watched by several watch workers, their
matrices kept by several matrix workers, and one watch worker killed.

200 clusters (by default) served by one FakeKubeFleet in a child process; a real Redis; N watch
workers (`-Q watch --pool threads`, each with its watch hub) and M matrix workers (every other
queue, prefork), real Celery processes as deployed; ensure_watches sent every half lease, as beat
does. Which worker watches what is read from the leases, which name the hub (the worker process)
that holds them, at one instant; the kinds streamed twice at once from the fake fleet's open watch
streams.

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
import socket
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
    parser.add_argument(
        "--freeze", action="store_true", help="SIGSTOP the first watch worker for two leases instead of SIGKILL"
    )
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
        wait(lambda: _shared_fairly(clusters, watchers), workers, args.timeout, POLL_FLEET)
        print(
            f"every watch worker holding its fair share: {time.perf_counter() - started:.1f} s after the first ensure_watches"
        )
        _print_distribution(fleet, clusters, watchers, args.lease)
        _print_matrix_tasks(matrix)
        survivors = takeover(args, fleet, clusters, watchers, workers)
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
) -> list[Worker]:
    """SIGKILL the first watch worker, change models in its clusters meanwhile, and time the
    takeover; returns the surviving watch workers."""
    victim, survivors = watchers[0], watchers[1:]
    # Its watches: the leases that name it when it dies (a cluster it gave back moments before
    # is another worker's, whose lease never changes hands).
    before = _watching(clusters)
    victim.proc.send_signal(signal.SIGSTOP if args.freeze else signal.SIGKILL)
    killed = time.perf_counter()
    if not args.freeze:
        victim.proc.wait(30)
    orphaned = {key: owner for key, owner in before.items() if _process_of(owner) == _process(victim)}
    names = {cluster.pk: name for name, cluster in clusters.items()}
    orphans = sorted({names[cluster_id] for cluster_id, _ in orphaned})
    if not orphans or not survivors:
        print("takeover: not measured (the first watch worker holds no cluster, or no other is running)")
        return []
    rng = random.Random(25)
    changed = {}
    for index, name in enumerate(rng.sample(orphans, min(args.changes, len(orphans)))):
        target = _selected_model(clusters[name], rng)
        if target is not None:
            fleet.patch(name, "clusterbasemodels", target, {"spec": {"modelFormat": {"name": f"moved-{index}"}}})
            changed[name] = target
    alive = [worker for worker in workers if worker is not victim]

    def taken_over() -> bool:
        now = _watching(clusters)
        return all(now.get(key, owner) != owner for key, owner in orphaned.items())

    wait(taken_over, alive, args.timeout, POLL_FLEET)
    print(
        f"takeover: {victim.name} (watching {len(orphans)} clusters) {'SIGSTOPped' if args.freeze else 'SIGKILLed'}; "
        f"all {len(orphaned)} of its watches held again by the others after {time.perf_counter() - killed:.1f} s "
        f"(lease {args.lease} s, ensure_watches every {args.lease / 2:g} s)"
    )

    def changes_shown() -> bool:
        return all(_outcome(clusters[name], model) == "no-runtime" for name, model in changed.items())

    wait(changes_shown, alive, args.timeout, POLL_FLEET)
    wait(lambda: _all_level(clusters), alive, args.timeout, POLL_FLEET)
    print(
        f"the {len(changed)} changes made during the takeover shown in their matrices, every matrix level: "
        f"{time.perf_counter() - killed:.1f} s after the {'SIGSTOP' if args.freeze else 'kill'}"
    )
    differing = _matrices_differing(clusters)
    print(f"matrices equal to a full rebuild: {len(clusters) - len(differing)} of {len(clusters)} {differing[:5]}")
    _print_distribution(fleet, clusters, survivors, args.lease)
    if args.freeze:  # the frozen worker comes back itself: no restart to time
        thaw(args, fleet, victim, killed, clusters, workers)
        return []
    return survivors


def thaw(
    args: argparse.Namespace,
    fleet: Fleet,
    victim: Worker,
    frozen: float,
    clusters: dict[str, Any],
    workers: list[Worker],
) -> None:
    """Resume the frozen worker two leases after its SIGSTOP: it must find its leases taken and
    stop those watches (no kind streamed twice), then take its fair share again."""
    time.sleep(max(0.0, frozen + 2 * args.lease - time.perf_counter()))  # the freeze lasts two leases
    victim.proc.send_signal(signal.SIGCONT)
    resumed = time.perf_counter()
    watchers = [worker for worker in workers if worker.name.startswith("watch-")]
    wait(lambda: _shared_fairly(clusters, watchers), workers, args.timeout, POLL_FLEET)
    print(
        f"thaw: resumed after {resumed - frozen:.0f} s frozen; fair shares again {time.perf_counter() - resumed:.1f} s later"
    )
    _print_distribution(fleet, clusters, watchers, args.lease)


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
        while len(_holders(clusters, [again])[0][again.name]) < wanted:
            if time.perf_counter() > deadline:
                print(f"restarted watch worker did not get its share within {time.perf_counter() - started:.0f} s")
                break
            time.sleep(POLL_FLEET)
        else:
            print(
                f"restarted watch worker watching its share ({wanted} clusters or more) "
                f"{time.perf_counter() - started:.1f} s after it was ready"
            )
        _print_distribution(fleet, clusters, watchers, args.lease)
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


def _print_distribution(fleet: Fleet, clusters: dict[str, Any], watchers: list[Worker], lease: float) -> None:
    """Print the clusters each watch worker holds and the clusters whose kinds two workers hold
    (from the leases, at one instant), and the kinds seen streamed twice at once over half a
    lease (a watch opens its stream again every half lease)."""
    held, split = _holders(clusters, watchers)
    twice = _streamed_twice(fleet, lease / 2 + 1)
    shares = ", ".join(f"{name} {len(got)}" for name, got in held.items())
    print(
        f"clusters per watch worker: {shares}; kinds streamed twice at once: {len(twice)}; clusters split: {len(split)}"
    )


def _shared_fairly(clusters: dict[str, Any], watchers: list[Worker]) -> bool:
    from inventory.live.shares import fair_share

    held, _ = _holders(clusters, watchers)
    share = fair_share(len(clusters), len(watchers))
    return sum(map(len, held.values())) == len(clusters) and all(len(got) <= share for got in held.values())


def _process(worker: Worker) -> str:
    return f"{socket.gethostname()}:{worker.proc.pid}"


def _process_of(owner: str) -> str:
    """host:pid of the worker whose hub a lease names (inventory.tasks.watch_hub adds a random part)."""
    from inventory.live.shares import owner_hub

    return (owner_hub(owner) or "").rpartition(":")[0]


def _holders(clusters: dict[str, Any], watchers: list[Worker]) -> tuple[dict[str, set[str]], list[str]]:
    """The clusters whose leases name each worker's hub now, and the clusters held by two."""
    hubs = {_process(worker): worker.name for worker in watchers}
    names = {cluster.pk: name for name, cluster in clusters.items()}
    holders: dict[str, set[str]] = {}
    for (cluster_id, _), owner in _watching(clusters).items():
        holders.setdefault(names[cluster_id], set()).add(hubs.get(_process_of(owner), "another holder"))
    held: dict[str, set[str]] = {worker.name: set() for worker in watchers}
    for name, by in holders.items():
        for holder in by:
            held.setdefault(holder, set()).add(name)
    return held, sorted(name for name, by in holders.items() if len(by) > 1)


def _streamed_twice(fleet: Fleet, seconds: float) -> set[Any]:
    """The kinds streamed twice at once, looked at over `seconds`."""
    twice = set()
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        twice |= {key for key, count in Counter((c, p) for c, p, _ in _watches(fleet)).items() if count > 1}
        time.sleep(POLL_FLEET)
    return twice


def _print_matrix_tasks(matrix: list[Worker]) -> None:
    for worker in matrix:
        tasks = Counter(MATRIX_TASK.findall(worker.log.read_text()))
        listed = ", ".join(f"{name.rsplit('.', 1)[1]} {count}" for name, count in tasks.most_common())
        print(f"matrix tasks run by {worker.name}: {sum(tasks.values())} ({listed})")


if __name__ == "__main__":
    main()
