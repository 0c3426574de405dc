"""The liveness of a Celery worker, for Kubernetes: the worker touches a file every few seconds
from its timer; the pod's livenessProbe (deploy/*worker.yaml) restarts the container when the
file is older than a minute. Independent of the broker on purpose: a worker waiting out a Redis
outage is alive (it reconnects by itself), a worker whose process hangs is not."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from celery import bootsteps

logger = logging.getLogger(__name__)

ALIVE_EVERY = 10.0


def alive_file() -> Path:
    return Path(os.environ.get("CELERY_ALIVE_FILE", "/tmp/celery-alive"))  # the pod's emptyDir


class AliveFile(bootsteps.StartStopStep):
    """Touches alive_file() every ALIVE_EVERY seconds while the worker runs; removes it at stop."""

    requires = ("celery.worker.components:Timer",)

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self.entry: Any = None

    def start(self, worker: Any) -> None:
        self._touch()
        self.entry = worker.timer.call_repeatedly(ALIVE_EVERY, self._touch)

    def stop(self, worker: Any) -> None:
        if self.entry is not None:
            self.entry.cancel()
        alive_file().unlink(missing_ok=True)

    def terminate(self, worker: Any) -> None:  # a cold shutdown
        self.stop(worker)

    @staticmethod
    def _touch() -> None:
        try:
            alive_file().touch()
        except OSError as error:  # a read-only /tmp: the probe will say so, the worker carries on
            logger.warning("cannot touch %s: %s", alive_file(), error)
