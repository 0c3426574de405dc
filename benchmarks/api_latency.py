"""Latency of the matrix cells API under concurrent clients, served by gunicorn.

Run: `python -m benchmarks.api_latency` (options: --help). It makes a throwaway SQLite
database, stores a synthetic cluster (benchmarks.synthetic, through inventory.sync), builds its
matrix, starts gunicorn on a free loopback port, and lets --clients threads request random
pages of /api/v1/matrix/cells/ (a bounded number each), after one unmeasured round that warms
every worker. Prints median and p95 latency per kind of request; it asserts nothing about time.

Each round also measures /healthz under the same clients, as the floor of what this machine
(shared, 2 cores) gives any request at that moment, and prints each scenario's p95 as a ratio
of it. Scenarios: pages never asked for before (every one made from the database), pages a
dashboard asks for again (served from the page cache), and clients that revalidate what they
hold with If-None-Match (304s). --rounds repeats the whole measurement.

`--profile` serves no clients: it makes new pages of each scenario in this process under
cProfile (after one unmeasured page each) and prints each scenario's CPU time per page and the
functions that take most of it (cumulative ms per page).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
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

from tests.support.net import free_port
from tests.support.processes import stop_process

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
        "CONN_MAX_AGE": "60",  # as deployed (deploy/config.env, docker-compose.yml)
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
            stop_process(process, timeout=30)


def answers(port: int) -> bool:
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        connection.request("GET", "/healthz")
        return connection.getresponse().status == 200
    except OSError:
        return False


def get(connection: http.client.HTTPConnection, path: str) -> tuple[int, dict[str, Any], str]:
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, json.loads(response.read()), response.headers.get("ETag", "")


def cells_path(params: dict[str, Any]) -> str:
    return "/api/v1/matrix/cells/?" + urllib.parse.urlencode({"cluster": CLUSTER, **params}, doseq=True)


Request = tuple[str, dict[str, str]]  # path, headers


def run_clients(port: int, requests: Sequence[Request], clients: int) -> tuple[list[float], int, float]:
    """`clients` threads share the requests (each its own keep-alive connection); returns
    latencies in ms, the number of answers other than 200 (304 when revalidating) and the wall time."""
    latencies: list[float] = []
    failures = 0
    lock = threading.Lock()
    shares = [requests[index::clients] for index in range(clients)]

    def client(share: Sequence[Request]) -> None:
        nonlocal failures
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        for path, headers in share:
            started = time.perf_counter()
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            response.read()
            elapsed = (time.perf_counter() - started) * 1000
            with lock:
                latencies.append(elapsed)
                failures += response.status != (304 if "If-None-Match" in headers else 200)
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


def plain(paths: Sequence[str]) -> list[Request]:
    return [(path, {}) for path in paths]


class Scenarios:
    """The requests of each scenario, drawn afresh every round (random pages stay mostly new)."""

    def __init__(self, port: int, args: argparse.Namespace) -> None:
        self.args, self.rng = args, random.Random(7)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        status, first, _etag = get(connection, cells_path({"page_size": args.page_size}))
        assert status == 200, first
        status, selected, _etag = get(connection, cells_path({"status": "selected", "page_size": args.page_size}))
        assert status == 200, selected
        self.namespace_pages = []
        for namespace in (f"team-{index}" for index in range(5)):
            status, page, _etag = get(connection, cells_path({"namespace": namespace, "status": "excluded"}))
            assert status == 200, page
            self.namespace_pages.append((namespace, max(1, page["count"] // args.page_size)))
        self.count, self.selected = first["count"], selected["count"]
        self.pages = max(1, self.count // args.page_size)
        self.selected_pages = max(1, self.selected // args.page_size)
        # What a dashboard's users look at: one page per client, asked for again and again.
        self.viewed = [cells_path({"page": self.rng.randint(1, self.pages)}) for _ in range(args.clients)]
        self.etags = {path: get(connection, path)[2] for path in self.viewed}
        connection.close()

    def draw(self) -> dict[str, list[Request]]:
        total, size, rng = self.args.clients * self.args.requests, self.args.page_size, self.rng
        return {
            "/healthz (the floor)": plain(["/healthz"] * total),
            "new page, with reasons": plain(
                [cells_path({"page": rng.randint(1, self.pages), "page_size": size}) for _ in range(total)]
            ),
            "new page, no reasons": plain(
                [
                    cells_path({"page": rng.randint(1, self.pages), "page_size": size, "reasons": "false"})
                    for _ in range(total)
                ]
            ),
            "new page, status=selected": plain(
                [
                    cells_path({"status": "selected", "page": rng.randint(1, self.selected_pages), "page_size": size})
                    for _ in range(total)
                ]
            ),
            "new page, one namespace, excluded": plain(
                [
                    cells_path({"namespace": namespace, "status": "excluded", "page": rng.randint(1, last_page)})
                    for namespace, last_page in (rng.choice(self.namespace_pages) for _ in range(total))
                ]
            ),
            "viewed page again (page cache)": plain([rng.choice(self.viewed) for _ in range(total)]),
            "viewed page revalidated (304)": [
                (path, {"If-None-Match": self.etags[path]}) for path in (rng.choice(self.viewed) for _ in range(total))
            ],
        }


def measure_round(
    port: int, warm: dict[str, list[Request]], measured: dict[str, list[Request]], clients: int
) -> dict[str, tuple[float, ...]]:
    """Per scenario: median, p95, max (ms), requests per second, unexpected answers."""
    results = {}
    for name, requests in measured.items():
        # A worker process parses the inventory and lays out a filter's cells once per
        # matrix generation: an unmeasured round per scenario first, so every worker has, with
        # requests of their own (the measured new pages stay new).
        run_clients(port, warm[name][: clients * 2], clients)
        latencies, failures, wall = run_clients(port, requests, clients)
        results[name] = (statistics.median(latencies), p95(latencies), max(latencies), len(latencies) / wall, failures)
    return results


def print_round(number: int, results: dict[str, tuple[float, ...]]) -> None:
    floor = results["/healthz (the floor)"][1]
    print(f"\nround {number}")
    print(f"{'scenario':36} {'median':>9} {'p95':>9} {'max':>9} {'p95/floor':>9} {'req/s':>7} {'errors':>6}")
    for name, (median, high, highest, rate, failures) in results.items():
        print(
            f"{name:36} {median:7.1f}ms {high:7.1f}ms {highest:7.0f}ms {high / floor:8.1f}x {rate:7.1f} {failures:6.0f}"
        )


PROFILED = {
    "new page, with reasons": {},
    "new page, no reasons": {"reasons": "false"},
    "new page, status=selected": {"status": "selected"},
    "new page, one namespace, excluded": {"namespace": "team-1", "status": "excluded"},
}


def profile_pages(args: argparse.Namespace, top: int = 14) -> None:
    """Profiles new pages of each scenario in-process (Django's test client, no server)."""
    import cProfile
    import pstats

    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    for path in ("/healthz", cells_path({"page_size": args.page_size})):
        client.get(path)
        started = time.process_time()
        for _ in range(args.requests):
            client.get(path)
        print(f"{path}: {(time.process_time() - started) * 1000 / args.requests:.2f} ms CPU (the same page again)")
    for name, params in PROFILED.items():
        first = client.get(cells_path({**params, "page_size": args.page_size}))
        assert first.status_code == 200, first.content[:500]
        pages = max(1, first.json()["count"] // args.page_size)
        paths = [
            cells_path({**params, "page_size": args.page_size, "page": 2 + (n * 7919) % pages})
            for n in range(args.requests)
        ]
        started = time.process_time()
        for path in paths[: len(paths) // 2]:
            assert client.get(path).status_code == 200
        plain_ms = (time.process_time() - started) * 1000 / (len(paths) // 2)
        profiled = paths[len(paths) // 2 :]
        profiler = cProfile.Profile(time.process_time)
        profiler.enable()
        for path in profiled:
            assert client.get(path).status_code == 200
        profiler.disable()
        print(
            f"\n{name}: {plain_ms:.2f} ms CPU a page unprofiled; {len(profiled)} other pages profiled (ms CPU a page):"
        )
        stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        ours = [item for item in stats.items() if _ours(item[0][0])]
        for title, rows, column in (
            ("project functions, cumulative", ours, 3),
            ("all functions, own time", list(stats.items()), 2),
        ):
            print(f"  {title}:")
            for (file, line, function), numbers in sorted(rows, key=lambda item: item[1][column], reverse=True)[:top]:
                where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if line else file
                print(f"  {numbers[column] * 1000 / len(profiled):7.2f} ms  {function} ({where})")


def _ours(file: str) -> bool:
    return file.startswith(str(ROOT)) and ".venv" not in file and "/benchmarks/" not in file


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
    parser.add_argument("--rounds", type=int, default=3, help="measure every scenario this many times")
    parser.add_argument("--keep", action="store_true", help="keep the database and gunicorn log")
    parser.add_argument("--profile", action="store_true", help="profile new pages in-process instead")
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
        if args.profile:
            profile_pages(args)
            return
        with gunicorn(env, workers=args.workers, threads=args.threads, log=folder / "gunicorn.log") as port:
            scenarios = Scenarios(port, args)
            print(
                f"{scenarios.count:,} cells ({scenarios.selected:,} selected); gunicorn: {args.workers} workers x "
                f"{args.threads} threads; {args.clients} clients x {args.requests} requests per scenario, "
                f"page size {args.page_size}; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
            )
            for number in range(1, args.rounds + 1):
                warm, measured = scenarios.draw(), scenarios.draw()
                print_round(number, measure_round(port, warm, measured, args.clients))
    finally:
        if args.keep:
            print(f"\nkept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
