"""Follow a child process's output from a thread, and wait for lines without sleeping blindly."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from django.conf import settings

from .patience import Deadline


class OutputWatcher:
    """Collects the lines a process writes to its stdout pipe; wait_for() blocks until one matches."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None, "start the process with stdout=subprocess.PIPE, text=True"
        self.proc = proc
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    @property
    def text(self) -> str:
        with self._changed:
            return "\n".join(self.lines)

    def wait_for(self, pattern: str, *, timeout: float) -> re.Match[str]:
        """The first match of pattern in an output line; AssertionError with the output on timeout or exit."""
        regex = re.compile(pattern)
        deadline = Deadline(timeout)
        seen = 0
        with self._changed:
            while True:
                for line in self.lines[seen:]:
                    if match := regex.search(line):
                        return match
                seen = len(self.lines)
                remaining = deadline.remaining()
                if self._closed or remaining <= 0:
                    state = "ended" if self._closed else f"did not print it within {timeout} s (stretched by the load)"
                    raise AssertionError(f"waiting for {pattern!r}: the output {state}:\n" + "\n".join(self.lines))
                self._changed.wait(min(remaining, 1.0))  # the load, hence the deadline, moves

    def wait_closed(self, *, timeout: float) -> None:
        self._thread.join(timeout)


def pid_alive(pid: int) -> bool:
    """True while pid runs; a zombie (exited, not yet reaped) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    # The state letter follows the parenthesised command name, which may itself contain spaces.
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for_pids_gone(pids: list[int], *, timeout: float) -> list[int]:
    """The pids still alive after timeout (empty when all are gone)."""
    deadline = time.monotonic() + timeout
    while (alive := [pid for pid in pids if pid_alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def stop_process(proc: subprocess.Popen, *, timeout: float, sig: int = signal.SIGTERM) -> int | None:
    """Send `sig` (if it still runs) and wait up to `timeout` s for it to end; kill it if it
    does not. Its exit code, or None when it had to be killed."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


def environ_without(*names: str) -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key not in names}


def processes_with_env(entry: str) -> list[int]:
    """The pids of this user's processes whose environment holds `entry` (NAME=value): what a
    supervisor started, its children's children included, whoever their parent is now."""
    found = []
    needle = entry.encode() + b"\0"
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if needle in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:  # gone meanwhile, or not ours
            continue
    return found


def wait_until(check: Callable[[], bool], *, timeout: float, interval: float = 0.05) -> bool:
    """Poll `check` (state another process or thread changes) until it holds; False on timeout."""
    deadline = Deadline(timeout)
    while not check():
        if deadline.expired():
            return False
        time.sleep(interval)
    return True


def benchmark_report(module: str, arguments: list[str], folder: Path, *, timeout: float) -> tuple[dict[str, Any], str]:
    """Run `python -m benchmarks.MODULE ARGUMENTS --report=...` (a fault run writing its figures
    as JSON) and return the report and the tail of its stack's log, for assertion messages."""
    report_path = folder / "report.json"
    run = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{module}", *arguments, f"--report={report_path}"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(report_path.read_text())
    return report, "\n".join(report["stack_log_tail"])
