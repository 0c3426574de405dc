"""Run inventory.live.watch.kind_watch in the test's own thread while another thread drives the fake.

The watch writes to the database, so it stays in the test thread (SQLite's shared in-memory test
database does not take concurrent writers); the driver only talks to the fake server. The watch
ends when `until` says so, when the driver sets `stop`, or at the deadline (a failing test).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from inventory.live.cluster_watch import kind_watch
from inventory.live.watch import WatchEvent, WatchReport
from inventory.models import Cluster

DEADLINE_SECONDS = 10.0


@dataclass
class WatchRun:
    report: WatchReport
    events: list[WatchEvent] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changes(self) -> list[tuple[str, str, str]]:
        """(type, name, resourceVersion) of each event other than BOOKMARK, in order."""
        return [(e.type, e.name, e.resource_version) for e in self.events if e.type != "BOOKMARK"]


def run_watch(
    cluster: Cluster,
    kind: str,
    *,
    until: Callable[[list[WatchEvent]], bool] | None = None,
    driver: Callable[[threading.Event], None] | None = None,
    lease: str | None = None,
    deadline: float = DEADLINE_SECONDS,
    on_event: Callable[[WatchEvent], None] | None = None,
) -> WatchRun:
    stop = threading.Event()
    events: list[WatchEvent] = []
    failures: list[BaseException] = []

    def record(event: WatchEvent) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)
        if until is not None and until(events):
            stop.set()

    def drive() -> None:
        try:
            assert driver is not None
            driver(stop)
        except BaseException as error:
            failures.append(error)
            stop.set()

    thread = threading.Thread(target=drive, name="fake driver") if driver else None
    if thread:
        thread.start()
    started = time.monotonic()
    try:
        report = kind_watch(cluster, kind, stop=stop, deadline=started + deadline, lease=lease, on_event=record)
    finally:
        stop.set()
        if thread:
            thread.join(DEADLINE_SECONDS)
    if failures:
        raise failures[0]
    return WatchRun(report, events, time.monotonic() - started)
