"""Memory of the serving process while it streams matrix exports.

Run: `python -m benchmarks.export_memory` (options: --help). It stores a synthetic cluster
(benchmarks.synthetic; 10,000 models x 1,000 runtimes by default) in a throwaway SQLite or
(--database postgres) PostgreSQL database, builds its matrix, starts gunicorn with one worker
on a free loopback port, and downloads each export (CSV and JSON, with and without reasons,
gzip-compressed as a browser asks) while sampling the worker's resident memory. Prints, per
export, the worker's RSS before the request, its peak during it and after it, and the bytes
sent; it asserts nothing.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import tempfile
import threading
import time
import urllib.parse
import zlib
from collections.abc import Sequence
from pathlib import Path

from benchmarks.api_latency import CLUSTER, fill_database, gunicorn, server_env
from benchmarks.django_setup import throwaway_database

MIB = 1024 * 1024
EXPORTS = {
    "csv": ("export.csv", {}),
    "csv, reasons": ("export.csv", {"reasons": "true"}),
    "json": ("export.json", {}),
    "json, reasons": ("export.json", {"reasons": "true"}),
}


def rss(pid: int) -> int:
    """The process's resident set size in bytes (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def children(pid: int) -> list[int]:
    return [
        int(child) for task in Path(f"/proc/{pid}/task").iterdir() for child in (task / "children").read_text().split()
    ]


def worker_pid() -> int:
    """The one gunicorn worker: the only child of this process's gunicorn child."""
    master = next(pid for pid in children(os.getpid()) if b"gunicorn" in Path(f"/proc/{pid}/cmdline").read_bytes())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if len(workers := children(master)) == 1:
            return workers[0]
        time.sleep(0.1)
    raise RuntimeError("gunicorn's worker did not start")


class Sampler(threading.Thread):
    """Samples a process's RSS every few milliseconds until stopped; keeps the peak."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak = pid, rss(pid)
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.01):
            self.peak = max(self.peak, rss(self.pid))

    def stop(self) -> int:
        self.done.set()
        self.join()
        return max(self.peak, rss(self.pid))


def download(port: int, path: str) -> tuple[int, int, int]:
    """Status, bytes on the wire (gzip) and bytes of content; the content is read and dropped."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    connection.request("GET", path, headers={"Accept-Encoding": "gzip"})
    response = connection.getresponse()
    gzipped = response.headers.get("Content-Encoding") == "gzip"
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    wire = content = 0
    while chunk := response.read(256 * 1024):
        wire += len(chunk)
        content += len(inflate.decompress(chunk)) if gzipped else len(chunk)
    connection.close()
    return response.status, wire, content


def measure(port: int, pid: int, path: str) -> dict[str, float]:
    before = rss(pid)
    sampler = Sampler(pid)
    sampler.start()
    started = time.perf_counter()
    status, wire, content = download(port, path)
    elapsed = time.perf_counter() - started
    peak = sampler.stop()
    if status != 200:
        raise RuntimeError(f"{path}: HTTP {status}")
    return {"before": before, "peak": peak, "after": rss(pid), "wire": wire, "content": content, "seconds": elapsed}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=10_000)
    parser.add_argument("--runtimes", type=int, default=1_000)
    parser.add_argument("--signatures", type=int, default=500)
    parser.add_argument("--database", choices=["postgres", "sqlite"], default="sqlite")
    parser.add_argument("--exports", nargs="+", choices=sorted(EXPORTS), default=list(EXPORTS))
    args = parser.parse_args(argv)

    folder = Path(tempfile.mkdtemp(prefix="ome-export-bench-"))
    try:
        with throwaway_database(args.database) as (url, _server):
            env = {**server_env(folder / "unused.sqlite3"), "DATABASE_URL": url}
            os.environ.update(env)
            setup = fill_database(args.models, args.runtimes, args.signatures)
            print(
                f"{args.models:,} models x {args.runtimes:,} runtimes on {args.database}: stored in "
                f"{setup['store_s']:.1f} s, matrix built in {setup['build_s']:.1f} s ({setup['rows']:,.0f} rows)"
            )
            run(env, folder, args.exports)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run(env: dict[str, str], folder: Path, exports: Sequence[str]) -> None:
    log = folder / "gunicorn.log"
    with gunicorn(env, workers=1, threads=2, log=log) as port:
        pid = worker_pid()
        started = rss(pid)
        # Warm: a page of cells with reasons loads what every request of the cluster shares
        # (the parsed inventory and its grid); the exports are measured from there.
        status, _wire, _content = download(port, f"/api/v1/matrix/cells/?cluster={CLUSTER}&reasons=true")
        assert status == 200, status
        print(
            f"gunicorn worker {pid}: {started / MIB:.0f} MiB after start, {rss(pid) / MIB:.0f} MiB after a page "
            f"of cells; {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
        )
        print(
            f"{'export':16} {'before':>8} {'peak':>8} {'growth':>8} {'after':>8} {'content':>10} {'gzip':>9} {'time':>7}"
        )
        for name in exports:
            endpoint, params = EXPORTS[name]
            query = urllib.parse.urlencode({"cluster": CLUSTER, **params})
            figures = measure(port, pid, f"/api/v1/matrix/cells/{endpoint}?{query}")
            print(
                f"{name:16} {figures['before'] / MIB:6.0f}MiB {figures['peak'] / MIB:6.0f}MiB "
                f"{(figures['peak'] - figures['before']) / MIB:6.0f}MiB {figures['after'] / MIB:6.0f}MiB "
                f"{figures['content'] / 1e6:8.1f}MB {figures['wire'] / 1e6:7.1f}MB {figures['seconds']:6.1f}s"
            )


if __name__ == "__main__":
    main()
