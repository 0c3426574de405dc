"""The suite's waits stretch with the machine's load (tests/support/patience.py)."""

from __future__ import annotations

import os

import pytest

from tests.support.patience import Deadline
from tests.support.processes import wait_until


def busy(monkeypatch: pytest.MonkeyPatch, per_core: float) -> None:
    monkeypatch.setattr(os, "getloadavg", lambda: (per_core * (os.cpu_count() or 1), 0.0, 0.0))


def test_a_deadline_stretches_while_the_machine_is_busy_and_shrinks_back(monkeypatch: pytest.MonkeyPatch) -> None:
    busy(monkeypatch, 0.2)
    deadline = Deadline(10)
    assert 9 < deadline.remaining() <= 10

    busy(monkeypatch, 4)
    assert 39 < deadline.remaining() <= 40

    busy(monkeypatch, 0.5)
    assert 9 < deadline.remaining() <= 10


def test_a_condition_that_never_comes_still_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    busy(monkeypatch, 0.1)
    assert not wait_until(lambda: False, timeout=0.2)
