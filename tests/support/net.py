"""Loopback ports and HTTP polling for tests that start servers."""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now (the caller's server binds it next)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def http_get(url: str, *, timeout: float = 5.0) -> tuple[int, str, bytes]:
    """GET url; returns (status, content type, body). Raises urllib.error.URLError when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


def wait_for_port_closed(port: int, *, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while port_is_open(port):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
