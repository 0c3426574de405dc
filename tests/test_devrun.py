"""`python -m ome_dashboard.devrun` (what `make run` starts) brings everything up and down cleanly."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery
from django.conf import settings

from ome_dashboard.devrun import RESTARTS_MAX
from ome_dashboard.local_services import redis_answers
from tests.support.net import free_port, http_get, wait_for_port_closed
from tests.support.patience import load_scaled
from tests.support.processes import (
    OutputWatcher,
    environ_without,
    processes_with_env,
    stop_process,
    wait_for_pids_gone,
    wait_until,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# On an idle machine; the waits stretch with the load (load_scaled).
STARTUP_TIMEOUT = 60
STOP_TIMEOUT = 20


class Devrun:
    def __init__(self, proc: subprocess.Popen[str], output: OutputWatcher, port: int, env_file: Path) -> None:
        self.proc = proc
        self.output = output
        self.port = port
        self.env_file = env_file

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def child_pids(self) -> dict[str, int]:
        return {
            m["name"]: int(m["pid"])
            for m in re.finditer(r"devrun: started (?P<name>\S+) \(pid (?P<pid>\d+)\)", self.output.text)
        }

    def wait_exit(self) -> int:
        try:
            code = self.proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"devrun did not exit within {STOP_TIMEOUT} s:\n{self.output.text}")
        self.output.wait_closed(timeout=5)
        return code


@contextlib.contextmanager
def devrun_started(tmp_path: Path, *, ready: bool = True) -> Iterator[Devrun]:
    """devrun on a SQLite file and its own Redis, (with `ready`) once it says so. Afterwards,
    whatever the test did: stopped with SIGTERM (it ends each child's process group whole), then
    killed, and every process it started, its children's children included, killed too."""
    port = free_port()
    env = environ_without("REDIS_URL", "DATABASE_URL", "DEBUG")
    env.update(
        PORT=str(port),
        DEVRUN_DIR=str(tmp_path / "run"),
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        ENV_FILE=str(tmp_path / "env"),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "ome_dashboard.devrun"],
        cwd=settings.BASE_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    running = Devrun(proc, OutputWatcher(proc), port, tmp_path / "env")
    try:
        if ready:
            # By condition: ready, or devrun gave up (then the test fails on what it said).
            running.output.wait_for(r"^devrun: (ready: |.* stopping)", timeout=load_scaled(STARTUP_TIMEOUT))
        yield running
    finally:
        stop_process(proc, timeout=load_scaled(STOP_TIMEOUT))
        for pid in processes_with_env(f"DEVRUN_DIR={tmp_path / 'run'}"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def devrun(tmp_path: Path) -> Iterator[Devrun]:
    with devrun_started(tmp_path) as running:
        yield running


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_devrun_serves_the_dashboard_and_stops_every_child_on_a_signal(devrun: Devrun, signum: int) -> None:
    health = http_get(f"{devrun.base_url}/healthz")
    api_status, api_type, _ = http_get(f"{devrun.base_url}/api/v1/")
    children = devrun.child_pids()

    devrun.proc.send_signal(signum)

    assert devrun.wait_exit() == 0, devrun.output.text
    assert health == (200, "application/json", b'{"status": "ok"}')
    assert (api_status, api_type) == (200, "application/json")
    assert set(children) == {
        "redis",
        "migrate",
        "register_clusters",
        "load_policies",
        "recompute_matrix",
        "demo_admin",
        "worker",
        "watch-worker",
        "beat",
        "web",
    }
    assert wait_for_pids_gone(list(children.values()), timeout=5) == []
    assert "DEBUG is on and anonymous reads are on: this copy listens on 127.0.0.1 only" in devrun.output.text
    box = re.search(
        rf"^\| OME Compat  {re.escape(devrun.base_url)}/ +\|\n\| User        admin +\|\n"
        r"\| Password    (\S{16}) +\|\n\| Stop        Ctrl-C",
        devrun.output.text,
        re.MULTILINE,
    )
    assert box is not None, devrun.output.text
    assert "with the password" not in devrun.output.text  # only the box shows it
    assert "AXES: BEGIN" not in devrun.output.text
    assert wait_for_port_closed(devrun.port, timeout=5)
    assert "devrun: stopped" in devrun.output.text


def test_devrun_starts_a_killed_worker_again_and_the_web_carries_on(devrun: Devrun) -> None:
    children = devrun.child_pids()
    redis_url = re.search(r"Redis (redis://\S+)\)", devrun.output.text)[1]  # type: ignore[index]

    os.kill(children["worker"], signal.SIGKILL)
    devrun.output.wait_for(r"^devrun: worker was killed by SIGKILL; starting it again in ", timeout=10)
    assert wait_until(lambda: devrun.child_pids()["worker"] != children["worker"], timeout=30)
    health = http_get(f"{devrun.base_url}/healthz")
    broker = Celery(broker=redis_url, backend=redis_url)
    try:
        pong = broker.send_task("ome_dashboard.debug_ping").get(timeout=60)
    finally:
        broker.close()

    assert health[0] == 200
    assert pong == "pong"
    assert devrun.proc.poll() is None, devrun.output.text
    assert devrun.child_pids()["web"] == children["web"]


def test_devrun_gives_up_on_a_crash_loop_and_says_which_child(devrun: Devrun) -> None:
    killed: set[int] = set()
    while devrun.proc.poll() is None and len(killed) <= RESTARTS_MAX:
        pid = devrun.child_pids()["beat"]
        if pid not in killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        wait_until(lambda: devrun.proc.poll() is not None or devrun.child_pids()["beat"] not in killed, timeout=60)
    children = devrun.child_pids()

    assert devrun.wait_exit() == 1
    assert f"devrun: beat was killed by SIGKILL {RESTARTS_MAX + 1} times within " in devrun.output.text
    assert "a crash loop; stopping the others" in devrun.output.text
    assert wait_for_pids_gone(list(children.values()), timeout=5) == []


def test_devrun_starts_its_redis_again_when_it_dies_and_the_web_and_workers_carry_on(devrun: Devrun) -> None:
    children = devrun.child_pids()
    redis_url = re.search(r"Redis (redis://\S+)\)", devrun.output.text)[1]  # type: ignore[index]

    os.kill(children["redis"], signal.SIGKILL)
    devrun.output.wait_for(r"^devrun: redis was killed by SIGKILL; starting it again", timeout=10)
    health = http_get(f"{devrun.base_url}/healthz")
    assert wait_until(lambda: devrun.child_pids()["redis"] != children["redis"], timeout=15)
    assert wait_until(lambda: redis_answers(redis_url), timeout=30), devrun.output.text
    broker = Celery(broker=redis_url, backend=redis_url)
    try:
        pong = broker.send_task("ome_dashboard.debug_ping").get(timeout=60)
    except Exception as error:
        pytest.fail(f"no answer through the new Redis ({error!r}):\n{devrun.output.text[-6000:]}")
    finally:
        broker.close()

    assert health[0] == 200
    assert pong == "pong"
    assert devrun.proc.poll() is None, devrun.output.text
    assert "crash loop" not in devrun.output.text


def test_manage_py_beside_make_run_uses_its_settings_and_redis_and_the_file_goes_when_it_stops(devrun: Devrun) -> None:
    redis_url = re.search(r"Redis (redis://\S+)\)", devrun.output.text)
    assert redis_url is not None, devrun.output.text
    beside = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "--verbosity=0",
            "-c",
            "from django.conf import settings as s; print(s.DEBUG, s.REDIS_URL)",
        ],
        cwd=settings.BASE_DIR,
        env={"PATH": os.environ["PATH"], "ENV_FILE": str(devrun.env_file)},
        capture_output=True,
        text=True,
        timeout=60,
    )

    devrun.proc.send_signal(signal.SIGTERM)

    assert beside.returncode == 0, beside.stderr
    assert beside.stdout.split() == ["True", redis_url.group(1)]
    assert devrun.wait_exit() == 0
    assert not devrun.env_file.exists()


def listening_ports() -> set[int]:
    """The TCP ports something listens on, on this machine (IPv4 and IPv6)."""
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if fields[3] == "0A":  # LISTEN
                    ports.add(int(fields[1].rpartition(":")[2], 16))
    return ports


def redis_ports(pids: list[int]) -> set[int]:
    """The ports of the Redis servers among `pids` (devrun's has `--port N` on its command line)."""
    ports = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
            if "--port" in argv[:-1]:
                ports.add(int(argv[argv.index("--port") + 1]))
    return ports


# Each state devrun may be stopped in: the line it has just said.
STATES = {
    "starting redis": r"^devrun: started redis ",
    "in a startup command": r"^devrun: started migrate ",
    "starting the workers and the web": r"^devrun: started web ",
    "running": r"^devrun: ready: ",
}


@pytest.mark.parametrize("said", list(STATES.values()), ids=list(STATES))
def test_devrun_stopped_in_any_state_leaves_no_process_and_no_listening_port_behind(tmp_path: Path, said: str) -> None:
    marker = f"DEVRUN_DIR={tmp_path / 'run'}"
    before = listening_ports()
    with devrun_started(tmp_path, ready=False) as started:
        started.output.wait_for(said, timeout=load_scaled(STARTUP_TIMEOUT))
        during = processes_with_env(marker)
        ports = {started.port, *redis_ports(during)}
        started.proc.send_signal(signal.SIGTERM)
        code = started.wait_exit()
        left = processes_with_env(marker)
    still_listening = (listening_ports() - before) & ports

    assert code == 0, started.output.text
    assert during, "devrun had started nothing to stop"
    assert left == [], f"left running after devrun stopped: {left}\n{started.output.text}"
    assert still_listening == set(), started.output.text
