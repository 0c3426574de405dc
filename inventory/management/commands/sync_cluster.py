from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.scope import SYSTEM
from inventory.live.cluster_watch import cluster_watch
from inventory.live.resync import ResyncResult, cluster_resync
from inventory.live.watch import WatchEvent
from inventory.models import Cluster, Kind
from inventory.selectors import ClusterChoiceError, cluster_choose


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """Ctrl-C and SIGTERM set `stop` (the watchers then end cleanly) instead of killing us."""

    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class Command(BaseCommand):
    help = (
        "Sync a cluster's OME objects into the inventory: a full list of every kind, then (without "
        "--once) watch each kind and apply every change until Ctrl-C or SIGTERM. A manifest "
        "cluster reloads its folders."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", help="cluster name; defaults to the only cluster")
        parser.add_argument("--once", action="store_true", help="list once and exit, do not watch")
        parser.add_argument(
            "--kind", action="append", choices=Kind.values, dest="kinds", help="only this kind (repeatable)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.verbosity = int(options["verbosity"])
        try:
            cluster = cluster_choose(options["cluster"], default="only", scope=SYSTEM)
        except ClusterChoiceError as error:
            raise CommandError(str(error)) from error
        kinds = options["kinds"] or list(Kind.values)
        result = cluster_resync(cluster, kinds=kinds)
        self._report(cluster, kinds, result)
        if options["once"] or not cluster.is_live:
            if result.errors:
                raise CommandError(f"{len(result.errors)} of {len(kinds)} kinds failed", returncode=1)
            if result.manifest_errors:
                raise CommandError(f"{len(result.manifest_errors)} bad documents", returncode=1)
            return
        stop = threading.Event()
        self._output_lock = threading.Lock()
        with _stop_on_signals(stop):
            self.stdout.write(f"watching {len(kinds)} kinds of cluster {cluster.name}; Ctrl-C to stop", ending="\n")
            self.stdout.flush()
            cluster_watch(cluster, stop=stop, kinds=kinds, on_event=self._event)
        self.stdout.write("stopped")

    def _report(self, cluster: Cluster, kinds: list[str], result: ResyncResult) -> None:
        for kind in kinds:
            if kind in result.errors:
                self.stderr.write(f"{kind}: {result.errors[kind].message}")
            else:
                self.stdout.write(result.applied.counts[kind].line(kind))
        for line in result.manifest_errors:
            self.stderr.write(line)
        self.stdout.flush()

    def _event(self, event: WatchEvent) -> None:
        if self.verbosity < 1 or event.type == "BOOKMARK":
            return
        where = f"{event.namespace}/{event.name}" if event.namespace else event.name
        note = "" if event.applied else " (already stored)"
        with self._output_lock:  # one watcher thread per kind
            self.stdout.write(f"{event.type} {event.kind} {where} at {event.resource_version}{note}")
            self.stdout.flush()
