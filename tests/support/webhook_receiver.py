"""A real HTTP server on loopback that records the webhooks it receives, answering 500 to the
first `fail_first` requests."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .patience import Deadline


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes
    at: float

    def header(self, name: str) -> str:
        return self.headers[name.lower()]

    @property
    def payload(self) -> Any:
        return json.loads(self.body)


@dataclass
class WebhookReceiver:
    url: str = ""
    fail_first: int = 0
    redirect_to: str = ""
    """Answer every POST with a 307 to this URL instead of taking it."""
    requests: list[Received] = field(default_factory=list)
    answered: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, predicate: Any, *, timeout: float = 15.0) -> Received:
        """The first request the predicate accepts; AssertionError after `timeout` seconds."""
        deadline = Deadline(timeout)
        while not deadline.expired():
            with self.lock:
                found = [request for request in self.requests if predicate(request)]
            if found:
                return found[0]
            time.sleep(0.02)
        raise AssertionError(f"no matching webhook within {timeout} s; received {len(self.requests)}")


@contextmanager
def running_receiver(*, fail_first: int = 0, redirect_to: str = "") -> Iterator[WebhookReceiver]:
    state = WebhookReceiver(fail_first=fail_first, redirect_to=redirect_to)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if state.redirect_to:
                self.send_response(307)
                self.send_header("Location", state.redirect_to)
                self.end_headers()
                return
            with state.lock:
                state.answered += 1
                failing = state.answered <= state.fail_first
                if not failing:
                    state.requests.append(
                        Received({k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                    )
            self.send_response(500 if failing else 204)
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
