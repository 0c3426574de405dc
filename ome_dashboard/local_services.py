"""What devrun needs to start local services and wait for them: a free loopback port, and
whether Redis or an HTTP endpoint answers yet."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request


def free_port() -> int:
    # The port is free now; the child binds it a moment later. Nothing else on a dev box races for it.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_answers(url: str) -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5).ping())
    except redis.exceptions.RedisError:
        return False


def http_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False
