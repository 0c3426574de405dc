"""A throwaway PostgreSQL cluster: initdb into a temporary folder, start on a free loopback port,
stop and delete it afterwards. Used by `make test` (the PostgreSQL pass) and by tests that must
restart a server under a live connection.

    python -m tests.ops.pg -- pytest -q -n 2     # runs the command with DATABASE_URL set
    python -m tests.ops.pg --available            # exit 0 when PostgreSQL's binaries are found

initdb and postgres refuse to run as root: as root, they run as the `postgres` user (the data
folder is created for it). Readiness comes from `pg_ctl start -w` (which polls the server
itself), never from a sleep. The server is tuned for tests: fsync and synchronous commit off.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

SERVER_OPTIONS = (
    "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c max_connections=200 -c shared_buffers=128MB"
)
START_TIMEOUT = 60


def bin_dir() -> Path | None:
    """PostgreSQL's server binaries: $PG_BIN, the newest /usr/lib/postgresql/*/bin, or PATH."""
    if explicit := os.environ.get("PG_BIN"):
        return Path(explicit) if (Path(explicit) / "initdb").exists() else None
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: [int(x) for x in Path(p).parent.name.split(".") if x.isdigit()],
    )
    for candidate in reversed(candidates):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "pg_ctl").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    return Path(found).resolve().parent if found and shutil.which("pg_ctl") else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresCluster:
    """One throwaway cluster. `start()`, `url(database)`, `restart()`, `stop()` (deletes it)."""

    def __init__(self, *, binaries: Path | None = None) -> None:
        found = binaries or bin_dir()
        if found is None:
            raise RuntimeError("PostgreSQL's binaries (initdb, pg_ctl) were not found; set PG_BIN")
        self.bin = found
        self.port = 0
        self.root = Path(tempfile.mkdtemp(prefix="ome-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        # As root, the server runs as `postgres`; otherwise as ourselves.
        self.user: str | None = "postgres" if os.geteuid() == 0 else None
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
        self.root.chmod(0o700)

    def _run(self, *argv: str, check: bool = True, timeout: float = START_TIMEOUT) -> subprocess.CompletedProcess[str]:
        options: dict[str, Any] = {"user": self.user, "group": self.user, "extra_groups": []} if self.user else {}
        return subprocess.run(
            [str(self.bin / argv[0]), *argv[1:]],
            cwd=self.root,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=check,
            **options,
        )

    def start(self) -> PostgresCluster:
        if not self.data.exists():
            self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        # The port is free now and the server binds it a moment later; on the rare race, try another.
        for _ in range(3):
            self.port = self.port or free_port()
            result = self._pg_ctl_start()
            if result.returncode == 0:
                return self
            self.port = 0
        self.stop()
        raise RuntimeError(f"PostgreSQL did not start:\n{result.stdout}{result.stderr}{self._log_tail()}")

    def _pg_ctl_start(self) -> subprocess.CompletedProcess[str]:
        options = f"-p {self.port} -k {self.root} {SERVER_OPTIONS}"
        return self._run(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-w",
            "-t",
            str(START_TIMEOUT),
            "-o",
            options,
            "start",
            check=False,
        )

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])
        return ""

    def url(self, database: str = "postgres") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> None:
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)

    def stop_server(self, *, mode: str = "fast") -> None:
        if self.data.exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)

    def restart(self) -> None:
        """Stop the server (dropping every connection) and start it again on the same port."""
        self.stop_server()
        result = self._pg_ctl_start()
        if result.returncode != 0:
            raise RuntimeError(f"PostgreSQL did not restart:\n{result.stdout}{result.stderr}{self._log_tail()}")

    def stop(self) -> None:
        """Stop the server and delete the cluster."""
        self.stop_server(mode="immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster().start()
    try:
        yield cluster
    finally:
        cluster.stop()


def run_with_postgres(command: Sequence[str], *, database: str) -> int:
    """Start a cluster, create `database`, run `command` with DATABASE_URL pointing at it, stop."""
    cluster = PostgresCluster().start()
    child: subprocess.Popen[bytes] | None = None

    def forward(signum: int, frame: FrameType | None) -> None:
        if child is not None and child.poll() is None:
            child.send_signal(signum)

    def ignore(signum: int, frame: FrameType | None) -> None:
        # Ctrl-C reaches the whole foreground process group, the child included: let it end
        # (pytest tears down first), then stop the server in `finally`.
        pass

    try:
        cluster.create_database(database)
        print(
            f"tests.ops.pg: PostgreSQL {cluster.bin.parent.name} at {cluster.url(database)} ({cluster.root})",
            flush=True,
        )
        signal.signal(signal.SIGINT, ignore)
        signal.signal(signal.SIGTERM, forward)
        child = subprocess.Popen(list(command), env={**os.environ, "DATABASE_URL": cluster.url(database)})
        return child.wait()
    finally:
        if child is not None and child.poll() is None:
            child.kill()
            child.wait()
        cluster.stop()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.ops.pg", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--available", action="store_true", help="exit 0 when PostgreSQL's binaries are found, 1 if not"
    )
    parser.add_argument("--database", default="ome", help="database to create (default: ome)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    args = parser.parse_args(argv)
    if args.available:
        return 0 if bin_dir() is not None else 1
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give a command after --")
    return run_with_postgres(command, database=args.database)


if __name__ == "__main__":
    sys.exit(main())
