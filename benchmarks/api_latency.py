"""Latency of the matrix cells API under concurrent clients, served by gunicorn.

Run: `python -m benchmarks.api_latency` (options: --help). It makes a throwaway SQLite
database, stores a synthetic cluster (benchmarks.synthetic, through inventory.sync), builds its
matrix, starts gunicorn on a free loopback port, and lets --clients threads request random
pages of /api/v1/matrix/cells/ (a bounded number each), after one unmeasured round that warms
every worker. Prints median and p95 latency per kind of request; it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CLUSTER = "synthetic"


def server_env(database: Path) -> dict[str, str]:
    """The environment of both this process (to fill the database) and gunicorn."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ome_dashboard.settings",
        "DATABASE_URL": f"sqlite:///{database}",
        "DEBUG": "false",
        "SECRET_KEY": "benchmark-only",
        "ALLOWED_HOSTS": "127.0.0.1",
        "MATRIX_UPDATE_ON_CHANGE": "false",
        "API_ANONYMOUS_READ": "true",
        "LOG_LEVEL": "WARNING",
    }


def fill_database(models: int, runtimes: int, signatures: int) -> dict[str, float]:
    """Migrate, store the synthetic cluster kind by kind, build its matrix; returns timings."""
    import django

    django.setup()
    from django.core.management import call_command

    import matching
    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory.models import Cluster, Kind
    from inventory.records import identity
    from inventory.sync import record_list, snapshot_apply
    from matrix.services import matrix_rebuild

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    runtime_objects = synthetic_runtimes(runtimes)
    objects = [
        matching.with_crd_defaults(obj)
        for obj in runtime_objects + synthetic_models(models, runtime_objects, signatures=signatures)
    ]
    by_kind: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = {kind: {} for kind in Kind.values}
    for obj in objects:
        key = identity(obj)
        assert key is not None
        by_kind[key[0]][key] = obj
    cluster = Cluster.objects.create(name=CLUSTER, source=Cluster.Source.MANIFESTS)
    for kind, keyed in by_kind.items():
        snapshot_apply(cluster, kind, keyed, prune=True)
        record_list(cluster, kind)
    stored = time.perf_counter()
    build = matrix_rebuild(cluster)
    built = time.perf_counter()
    return {"store_s": stored - started, "build_s": built - stored, "rows": build.rows_count}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def gunicorn(env: dict[str, str], *, workers: int, threads: int, log: Path) -> Iterator[int]:
    port = free_port()
    command = [
        sys.executable, "-m", "gunicorn", "ome_dashboard.wsgi:application",
        "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--threads", str(threads),
        "--worker-class", "gthread", "--timeout", "120", "--log-level", "warning",
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 60
            while not answers(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn did not start; see {log}")
                time.sleep(0.1)
            yield port
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def answers(port: int) -> bool:
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False


def get(connection: http.client.HTTPConnection, path: str) -> tuple[int, dict[str, Any]]:
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def cells_path(params: dict[str, Any]) -> str:
    return "/api/v1/matrix/cells/?" + urllib.parse.urlencode({"cluster": CLUSTER, **params}, doseq=True)


def run_clients(port: int, paths: Sequence[str], clients: int) -> tuple[list[float], int, float]:
    """`clients` threads share the paths (each its own keep-alive connection); returns latencies
    in ms, the number of non-200 answers and the wall time."""
    latencies: list[float] = []
    failures = 0
    lock = threading.Lock()
    shares = [paths[index::clients] for index in range(clients)]

    def client(share: Sequence[str]) -> None:
        nonlocal failures
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for path in share:
            started = time.perf_counter()
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                latencies.append(elapsed)
                failures += response.status != 200
        connection.close()

    threads = [threading.Thread(target=client, args=(share,)) for share in shares]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, failures, time.perf_counter() - started


def p95(values: Sequence[float]) -> float:
    return statistics.quantiles(values, n=20, method="inclusive")[-1]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=2000)
    parser.add_argument("--runtimes", type=int, default=300)
    parser.add_argument("--signatures", type=int, default=500)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=15, help="requests per client per scenario")
    parser.add_argument("--page-size", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=4, help="gunicorn threads per worker")
    parser.add_argument("--keep", action="store_true", help="keep the database and gunicorn log")
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="ome-api-bench-"))
    env = server_env(folder / "bench.sqlite3")
    os.environ.update(env)
    try:
        setup = fill_database(args.models, args.runtimes, args.signatures)
        print(
            f"{args.models:,} models x {args.runtimes:,} runtimes: stored in {setup['store_s']:.1f} s, "
            f"matrix built in {setup['build_s']:.1f} s ({setup['rows']:,.0f} rows)"
        )
        rng = random.Random(7)
        with gunicorn(env, workers=args.workers, threads=args.threads, log=folder / "gunicorn.log") as port:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
            status, first = get(connection, cells_path({"page_size": args.page_size}))
            assert status == 200, first
            status, selected = get(connection, cells_path({"status": "selected", "page_size": args.page_size}))
            assert status == 200, selected
            namespace_pages = []
            for namespace in (f"team-{index}" for index in range(5)):
                status, page = get(connection, cells_path({"namespace": namespace, "status": "excluded"}))
                assert status == 200, page
                namespace_pages.append((namespace, max(1, page["count"] // args.page_size)))
            connection.close()
            print(
                f"{first['count']:,} cells ({selected['count']:,} selected); gunicorn: {args.workers} workers x "
                f"{args.threads} threads; {args.clients} clients x {args.requests} requests per scenario, "
                f"page size {args.page_size}"
            )
            total = args.clients * args.requests
            pages = max(1, first["count"] // args.page_size)
            selected_pages = max(1, selected["count"] // args.page_size)
            scenarios = {
                "random page, with reasons": [
                    cells_path({"page": rng.randint(1, pages), "page_size": args.page_size}) for _ in range(total)
                ],
                "random page, no reasons": [
                    cells_path({"page": rng.randint(1, pages), "page_size": args.page_size, "reasons": "false"})
                    for _ in range(total)
                ],
                "status=selected, random page": [
                    cells_path(
                        {"status": "selected", "page": rng.randint(1, selected_pages), "page_size": args.page_size}
                    )
                    for _ in range(total)
                ],
                "one namespace, status=excluded": [
                    cells_path({"namespace": namespace, "status": "excluded", "page": rng.randint(1, last_page)})
                    for namespace, last_page in (rng.choice(namespace_pages) for _ in range(total))
                ],
            }
            print(f"\n{'scenario':34} {'median':>9} {'p95':>9} {'max':>9} {'req/s':>7} {'errors':>6}")
            for name, paths in scenarios.items():
                # A worker process parses the inventory and lays out a filter's cells once per
                # matrix generation: one unmeasured round per scenario, so every worker has.
                run_clients(port, paths[: args.clients * 2], args.clients)
                latencies, failures, wall = run_clients(port, paths, args.clients)
                print(
                    f"{name:34} {statistics.median(latencies):7.0f}ms {p95(latencies):7.0f}ms "
                    f"{max(latencies):7.0f}ms {len(latencies) / wall:7.1f} {failures:6d}"
                )
    finally:
        if args.keep:
            print(f"\nkept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
