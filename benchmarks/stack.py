"""`make up` (ome_dashboard.devrun --production) as a child of a benchmark: every process of the
production stack against a live cluster served by the fake Kubernetes API, on a database of the
caller's. It reads what devrun prints (children's pids, the Redis URL) and samples the broker's
queues and each process's peak RSS."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

import redis

from tests.support.net import free_port
from tests.support.processes import OutputWatcher, environ_without, stop_process, wait_for_pids_gone

BASE_DIR = Path(__file__).resolve().parent.parent
QUEUES = ("celery", "control", "matrix", "watch")
# Short periods so that supervision acts within the run (production defaults are minutes).
FAST_SETTINGS = {
    "OME_WATCH_LEASE": "10",  # ensure_watches every 5 s
    "MATRIX_CATCH_UP_INTERVAL": "5",
    "MATRIX_AUDIT_INTERVAL": "30",
    "OME_RESYNC_INTERVAL": "300",
    "MATRIX_UPDATE_DELAY": "0.5",
}


class Stack:
    def __init__(
        self,
        run_dir: Path,
        *,
        database_url: str,
        kubeconfig: Path,
        redis_url: str | None = None,
        settings: dict[str, str] | None = None,
    ) -> None:
        """`redis_url`: a Redis of the caller's (one it can kill and keep down), else devrun's own;
        `settings`: environment settings over FAST_SETTINGS."""
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = environ_without("REDIS_URL", "DATABASE_URL", "DEBUG")
        env.update(
            FAST_SETTINGS,
            DEBUG="false",
            SECRET_KEY="burst-benchmark-key",
            ALLOWED_HOSTS="localhost,127.0.0.1",
            SECURE_COOKIES="false",
            DATABASE_URL=database_url,
            STATIC_ROOT=str(run_dir / "static"),
            DEVRUN_DIR=str(run_dir / "run"),
            PORT=str(self.port),
            OME_CLUSTERS=f"live=kubeconfig:{kubeconfig}",
            OME_KUBECONFIG_DIR=str(kubeconfig.parent),  # kubeconfigs are read from this folder only
            PYTHONUNBUFFERED="1",
        )
        env.update(settings or {})
        if redis_url:
            env["REDIS_URL"] = redis_url
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ome_dashboard.devrun", "--production"],
            cwd=BASE_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.output = OutputWatcher(self.proc)
        self.peaks: Counter[str] = Counter()
        self._sampling = threading.Event()

    def wait_ready(self, timeout: float = 180) -> None:
        self.output.wait_for(r"^devrun: ready: ", timeout=timeout)

    @property
    def redis_url(self) -> str:
        return re.search(r"Redis (redis://\S+)\)", self.output.text)[1]  # type: ignore[index]

    def children(self) -> dict[str, int]:
        """name -> pid of devrun's latest child of that name (redis is started again if it dies)."""
        return {m[1]: int(m[2]) for m in re.finditer(r"devrun: started (\S+) \(pid (\d+)\)", self.output.text)}

    def get(self, path: str, *, timeout: float = 5) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(self.base + path, timeout=timeout) as response:
                return response.status, response.read().decode()
        except OSError as error:
            return 0, str(error)

    def metric(self, name: str, labels: str) -> float | None:
        status, text = self.get("/metrics")
        found = re.search(rf"^{re.escape(name)}\{{{re.escape(labels)}\}} (\S+)$", text, re.MULTILINE)
        return float(found[1]) if status == 200 and found else None

    def sample_queues(self, interval: float = 0.1) -> threading.Thread:
        """Record each queue's peak length until stop_sampling()."""

        def sample() -> None:
            client = redis.Redis.from_url(self.redis_url, socket_timeout=1)
            while not self._sampling.wait(interval):
                with contextlib.suppress(redis.RedisError):
                    for queue in QUEUES:
                        self.peaks[queue] = max(self.peaks[queue], int(client.llen(queue)))
                    # Taken by a worker and not finished yet (countdown tasks wait there too).
                    self.peaks["reserved"] = max(self.peaks["reserved"], int(client.hlen("unacked")))

        thread = threading.Thread(target=sample, name="queue sampler", daemon=True)
        thread.start()
        return thread

    def stop_sampling(self) -> None:
        self._sampling.set()

    def peak_rss(self) -> dict[str, float]:
        """MiB of peak resident memory (VmHWM) of every process of the stack, by name; a worker's
        pool processes are listed as `<name> child N`."""
        peaks = {"devrun": _vm_hwm(self.proc.pid)}
        for name, pid in self.children().items():
            peaks[name] = _vm_hwm(pid)
            for index, child in enumerate(_children_of(pid), start=1):
                peaks[f"{name} child {index}"] = _vm_hwm(child)
        return {name: mib for name, mib in peaks.items() if mib is not None}

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time (user + system) each process of the stack has used so far, by name, its pool
        processes' included: who took the cores during a burst."""
        used = {}
        for name, pid in self.children().items():
            times = [_cpu_seconds(process) for process in (pid, *_children_of(pid))]
            if times[0] is not None:
                used[name] = round(sum(time for time in times if time is not None), 1)
        return used

    def stop(self) -> None:
        pids = list(self.children().values())
        stop_process(self.proc, timeout=60)
        self.output.wait_closed(timeout=5)
        for pid in wait_for_pids_gone(pids, timeout=20):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _vm_hwm(pid: int) -> float | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(found[1]) / 1024 if found else None


def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def _children_of(pid: int) -> list[int]:
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                children.append(int(stat.parent.name))
    return sorted(children)


def wait_for(check: object, *, timeout: float, interval: float = 0.2) -> float | None:
    """Seconds until `check()` held, or None on timeout (polling processes we do not control)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():  # type: ignore[operator]
            return time.monotonic() - started
        time.sleep(interval)
    return None
