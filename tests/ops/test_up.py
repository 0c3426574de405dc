"""`make up` (python -m ome_dashboard.devrun --production) starts docker-compose.yml's processes
with its commands, here, with DEBUG off: gunicorn serves the dashboard and the collected static
files, the worker builds the matrix that register_clusters --sync asked for, logs are JSON lines,
and SIGTERM stops everything."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.conf import settings

from tests.patches.seed import SEED_FILES
from tests.support.net import free_port, http_get
from tests.support.processes import OutputWatcher, environ_without, wait_for_pids_gone

pytestmark = [pytest.mark.integration, pytest.mark.slow]
METRICS_TOKEN = "make-up-test-metrics-token"


def test_make_up_serves_the_dashboard_with_gunicorn_workers_and_beat_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = environ_without("REDIS_URL", "DATABASE_URL", "DEBUG")
    env.update(
        DEBUG="false",
        # With DEBUG off /metrics and the checks of /readyz need the token (this test reads both).
        METRICS_TOKEN=METRICS_TOKEN,
        SECRET_KEY="make-up-test-key",
        ALLOWED_HOSTS="localhost,127.0.0.1",
        SECURE_COOKIES="false",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        STATIC_ROOT=str(tmp_path / "static"),
        DEVRUN_DIR=str(tmp_path / "run"),
        PORT=str(port),
        LOG_FORMAT="json",
        OME_CLUSTERS="seed=manifests:" + ",".join(map(str, SEED_FILES)),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "ome_dashboard.devrun", "--production"],
        cwd=settings.BASE_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output = OutputWatcher(proc)
    base = f"http://127.0.0.1:{port}"
    try:
        output.wait_for(r"^devrun: ready: ", timeout=90)
        probe = urllib.request.Request(f"{base}/readyz", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        with urllib.request.urlopen(probe, timeout=5) as answer:
            ready = json.loads(answer.read())
        css = http_get(f"{base}/static/css/site.css")
        home = http_get(f"{base}/")
        rows = _wait_for_matrix_rows(base, cluster="seed", timeout=60)

        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        output.wait_closed(timeout=5)
        pids = [int(pid) for pid in re.findall(r"devrun: started \S+ \(pid (\d+)\)", output.text)]
        for pid in wait_for_pids_gone(pids, timeout=20):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    assert ready["status"] == "ok", ready
    assert ready["checks"]["broker"]["status"] == "ok"
    assert (css[0], css[1].split(";")[0]) == (200, "text/css")
    assert home[0] == 200
    assert rows > 0
    assert code == 0, output.text
    assert re.search(r"^\s*web \| .*Starting gunicorn", output.text, re.MULTILINE)
    started = re.findall(r"devrun: started (\S+) ", output.text)
    assert started[:5] == ["redis", "collectstatic", "migrate", "register_clusters", "load_policies"]
    assert set(started[5:]) == {"worker", "control-worker", "matrix-worker", "watch-worker", "beat", "web"}
    worker_lines = [line.split("| ", 1)[1] for line in output.lines if line.lstrip().startswith("worker |")]
    assert any(line.startswith("{") and json.loads(line)["message"].endswith("ready.") for line in worker_lines)


def _wait_for_matrix_rows(base: str, *, cluster: str, timeout: float) -> float:
    """The rows of the cluster's matrix as /metrics reports them, once the worker has built it."""
    deadline = time.monotonic() + timeout
    pattern = re.compile(rf'^ome_matrix_rows\{{cluster="{cluster}",outcome="[^"]+"\}} (\S+)$', re.MULTILINE)
    while True:
        scrape = urllib.request.Request(f"{base}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
        with urllib.request.urlopen(scrape, timeout=5) as response:
            rows = sum(float(value) for value in pattern.findall(response.read().decode()))
        if rows or time.monotonic() > deadline:
            return rows
        time.sleep(0.2)  # polling a process we do not control
