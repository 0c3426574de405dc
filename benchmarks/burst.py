"""A burst of changes against the production-shaped stack, and (with --faults) the soak that
follows it: how long until the inventory and the matrix are level after the last change, how
long the task queues grew, and each process's peak RSS.

    python -m benchmarks.burst [--changes 5000] [--seconds 25] [--database postgres|sqlite]
                               [--faults] [--hog N] [--report report.json]

It starts `make up` (devrun --production: gunicorn, the four workers, beat, its own Redis)
against a live cluster served by the fake Kubernetes API, on a throwaway PostgreSQL (tests/ops/
pg.py) or a SQLite file. The burst adds new ClusterBaseModels and changes the architecture of
models added before, at an even rate. With --faults it then kills Redis (devrun starts it again)
while more changes arrive, then restarts PostgreSQL while more arrive. At the end it compares the
stored inventory with the cluster's objects and the matrix with a full rebuild, and prints (and
writes to --report) every figure as JSON too. With --hog N it runs the burst twice, as is and
then beside N busy processes (a CPU hog), and prints the ratio of the times to inventory level.
Nothing asserts a time; tests/ops/test_soak.py asserts the report's equalities.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks.cli import fault_run_parser, finish_fault_run
from benchmarks.django_setup import throwaway_database
from benchmarks.stack import Stack, wait_for
from tests.fakes.kube_api import FakeKubeAPI
from tests.inventory.live.objects import model, runtime
from tests.ops import pg
from tests.patches.seed import documents

ARCHITECTURES = ["LlamaForCausalLM", "Qwen2ForCausalLM", "MistralForCausalLM", "GemmaForCausalLM", "NoSuchArch"]
LEVEL_TIMEOUT = 240.0
KINDS = ("ClusterBaseModel", "BaseModel", "ClusterServingRuntime", "ServingRuntime", "InferenceService")


def cluster_objects() -> list[dict[str, Any]]:
    """The seed case plus runtimes for most architectures, in two namespaces."""
    objects = list(documents())
    for architecture in ARCHITECTURES[:3]:
        objects.append(runtime(f"rt-{architecture.lower()}", architecture=architecture))
        objects.append(runtime(f"ns-rt-{architecture.lower()}", "team-b", architecture=architecture))
    return objects


class Burst:
    """Drives the fake: `count` changes spread evenly over `seconds`."""

    def __init__(self, fake: FakeKubeAPI, seed: int = 10) -> None:
        self.fake, self.random, self.added = fake, random.Random(seed), 0

    def change(self) -> None:
        if self.added < 20 or self.random.random() < 0.5:
            self.added += 1
            self.fake.create(model(f"burst-{self.added:05d}", architecture=self.random.choice(ARCHITECTURES)))
        else:
            name = f"burst-{self.random.randint(1, self.added):05d}"
            self.fake.patch(
                "ClusterBaseModel", name, {"spec": {"modelArchitecture": self.random.choice(ARCHITECTURES)}}
            )

    def run(self, count: int, seconds: float) -> float:
        """Returns the monotonic time of the last change."""
        started = time.monotonic()
        for index in range(count):
            due = started + seconds * index / count
            if (wait := due - time.monotonic()) > 0:
                time.sleep(wait)  # pacing the burst, not waiting for a result
            self.change()
        return time.monotonic()


def cluster_state(fake: FakeKubeAPI) -> set[tuple[str, str, str, str]]:
    """(kind, namespace, name, resourceVersion) of every object the cluster holds."""
    return {
        (kind, obj["metadata"].get("namespace", ""), obj["metadata"]["name"], obj["metadata"]["resourceVersion"])
        for kind in KINDS
        for obj in fake.objects(kind)
    }


def stored_state() -> set[tuple[str, str, str, str]]:
    from inventory.models import Resource

    with _database_may_be_restarting():
        return set(
            Resource.objects.filter(cluster__name="live").values_list("kind", "namespace", "name", "resource_version")
        )
    return set()


def listed_kinds() -> dict[str, Any]:
    """When each kind of the cluster was last listed."""
    from inventory.models import SyncState

    with _database_may_be_restarting():
        return dict(SyncState.objects.filter(cluster__name="live").values_list("kind", "last_list_at"))
    return {}


def matrix_level() -> bool:
    from inventory.models import Cluster
    from matrix.services import matrix_is_level

    with _database_may_be_restarting():
        cluster = Cluster.objects.filter(name="live").first()
        return cluster is not None and matrix_is_level(cluster)
    return False


@contextlib.contextmanager
def _database_may_be_restarting() -> Iterator[None]:
    from django.db import DatabaseError, connection

    try:
        yield
    except DatabaseError:  # not level yet; reconnect next time
        connection.close()


def level_times(fake: FakeKubeAPI, last_change: float) -> dict[str, float | None]:
    """Seconds after `last_change` until the inventory equalled the cluster, and then until the
    matrix was level with it (checked row by row, matrix.updates)."""
    wanted = cluster_state(fake)
    times: dict[str, float] = {}
    while time.monotonic() - last_change < LEVEL_TIMEOUT and "matrix" not in times:
        if "inventory" not in times and stored_state() == wanted:
            times["inventory"] = time.monotonic() - last_change
        if "inventory" in times and matrix_level():
            times["matrix"] = time.monotonic() - last_change
        time.sleep(0.25)  # polling processes we do not control
    return {f"{name}_level_s": round(times[name], 2) if name in times else None for name in ("inventory", "matrix")}


def setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ome_dashboard.settings")
    os.environ.setdefault("DEBUG", "true")  # this process's settings only; the stack runs DEBUG off
    os.environ["MATRIX_UPDATE_ON_CHANGE"] = "false"  # this process only reads
    import django

    django.setup()


def faults(stack: Stack, fake: FakeKubeAPI, burst: Burst, server: pg.PostgresCluster | None) -> dict[str, Any]:
    """Redis killed while changes arrive; then PostgreSQL restarted while changes arrive."""
    report: dict[str, Any] = {}
    os.kill(stack.children()["redis"], signal.SIGKILL)
    web_during = [stack.get("/healthz")[0] for _ in range(5)]
    burst.run(200, 4)
    report["redis_restarted"] = wait_for(lambda: "starting it again" in stack.output.text, timeout=30) is not None
    report["web_up_while_redis_down"] = all(status == 200 for status in web_during)
    if server is not None:
        changes = threading.Thread(target=burst.run, args=(200, 4))
        changes.start()
        server.restart()
        changes.join()
        report["postgres_restarted"] = True
    else:
        report["postgres_restarted"] = False
    return report


def final_checks(fake: FakeKubeAPI) -> dict[str, Any]:
    from inventory.models import Cluster
    from tests.support.matrix import matrix_differences

    differences = matrix_differences(Cluster.objects.get(name="live"))
    missing, extra = cluster_state(fake) - stored_state(), stored_state() - cluster_state(fake)
    return {
        "inventory_equals_cluster": not missing and not extra,
        "inventory_missing": sorted(missing)[:10],
        "inventory_extra": sorted(extra)[:10],
        "matrix_differences": len(differences),
        "matrix_difference_examples": differences[:10],
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    fake = FakeKubeAPI().start()
    for obj in cluster_objects():
        fake.create(obj)
    report: dict[str, Any] = {"changes": args.changes, "seconds": args.seconds, "database": args.database}
    report["load_average_at_start"] = round(os.getloadavg()[0], 1)
    with tempfile.TemporaryDirectory(prefix="ome-burst-") as folder, throwaway_database(args.database) as (url, server):
        setup_django(url)
        stack = Stack(Path(folder), database_url=url, kubeconfig=fake.write_kubeconfig(Path(folder) / "live.yaml"))
        try:
            began = time.monotonic()
            stack.wait_ready()
            report["stack_ready_s"] = round(time.monotonic() - began, 1)
            report["started"] = wait_for(lambda: fake.active_watches() >= 5 and matrix_level(), timeout=120) is not None
            report["watching_s"] = round(time.monotonic() - began, 1)
            stack.sample_queues()
            burst = Burst(fake)
            cpu_before = stack.cpu_seconds()
            burst_began = listed_kinds()
            last = burst.run(args.changes, args.seconds)
            report.update(level_times(fake, last))
            # A kind listed again during the burst: its watch lost its lease or its stream (issue 36).
            report["kinds_listed_again"] = sorted(
                kind for kind, at in listed_kinds().items() if at != burst_began.get(kind)
            )
            report["cpu_s_during_burst"] = {
                name: round(used - cpu_before.get(name, 0.0), 1) for name, used in stack.cpu_seconds().items()
            }
            report["queue_peaks"] = dict(stack.peaks)
            if args.faults:
                report.update(faults(stack, fake, burst, server))
                report.update({f"after_faults_{k}": v for k, v in level_times(fake, time.monotonic()).items()})
            report.update(final_checks(fake))
            report["peak_rss_mib"] = {name: round(mib, 1) for name, mib in sorted(stack.peak_rss().items())}
            report["load_average_at_end"] = round(os.getloadavg()[0], 1)
        finally:
            stack.stop_sampling()
            stack.stop()
            fake.stop()
            report["stack_log_tail"] = stack.output.lines[-30:]
    return report


@contextlib.contextmanager
def cpu_hog(processes: int) -> Iterator[None]:
    """`processes` busy loops beside the stack, as other work on a shared machine."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def quiet_and_beside_hog(args: argparse.Namespace) -> dict[str, Any]:
    """The burst as is, then beside the hog; each run in a child process (its own database and
    Django set-up)."""
    runs = {}
    for name, hog in (("quiet", 0), (f"beside_{args.hog}_busy_processes", args.hog)):
        with tempfile.NamedTemporaryFile(suffix=".json") as report, cpu_hog(hog):
            child = ["--changes", str(args.changes), "--seconds", str(args.seconds), "--database", args.database]
            child += ["--faults"] if args.faults else []
            subprocess.run([sys.executable, "-m", "benchmarks.burst", *child, "--report", report.name], check=True)
            runs[name] = json.loads(Path(report.name).read_text())
    quiet, busy = runs.values()
    if quiet.get("inventory_level_s") and busy.get("inventory_level_s"):
        runs["inventory_level_ratio"] = round(busy["inventory_level_s"] / quiet["inventory_level_s"], 2)
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = fault_run_parser("burst", __doc__)
    parser.add_argument("--changes", type=int, default=5000)
    parser.add_argument("--seconds", type=float, default=25.0)
    parser.add_argument("--faults", action="store_true", help="then kill Redis and restart PostgreSQL")
    parser.add_argument(
        "--hog", type=int, default=0, metavar="N", help="run again beside N busy processes; print both and the ratio"
    )
    args = parser.parse_args(argv)
    return finish_fault_run(quiet_and_beside_hog(args) if args.hog else run(args), args.report)


if __name__ == "__main__":
    sys.exit(main())
