"""How long a test waits for a condition another process or thread brings about: the time it
takes on an idle machine, stretched for as long as the machine is busy. Every wait helper of the
suite (OutputWatcher.wait_for, wait_until, the fakes' wait_for) measures its timeout here, so a
start-up that takes 20 s alone may take 80 s beside three CPU hogs per core without failing,
and a condition that never comes still fails. No Django: the fakes use it too."""

from __future__ import annotations

import os
import time


def load_factor() -> float:
    """The one-minute load average per core, at least 1."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def load_scaled(seconds: float) -> float:
    """`seconds` on an idle machine, stretched by how busy it is now."""
    return seconds * load_factor()


class Deadline:
    """`seconds` of an idle machine from now, stretched by the load each time it is asked."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()

    def remaining(self) -> float:
        return load_scaled(self.seconds) - (time.monotonic() - self.started)

    def expired(self) -> bool:
        return self.remaining() <= 0
