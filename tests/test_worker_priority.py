"""A worker of the matrix queue alone yields the CPU (OME_MATRIX_WORKER_NICENESS); the watch
worker and every other worker keep their priority."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ome_dashboard import celery
from ome_dashboard.processes import PRODUCTION_WORKERS


def worker_of(queues: list[str]) -> SimpleNamespace:
    """The part of a WorkController the hook reads: the queues it consumes (`-Q`)."""
    consumed = {name: object() for name in queues}
    return SimpleNamespace(app=SimpleNamespace(amqp=SimpleNamespace(queues=SimpleNamespace(consume_from=consumed))))


def queues_of(worker: str) -> list[str]:
    (option,) = [arg for arg in PRODUCTION_WORKERS[worker] if arg.startswith("--queues=")]
    return option.removeprefix("--queues=").split(",")


@pytest.mark.parametrize(
    ("worker", "niced"),
    [("matrix-worker", True), ("watch-worker", False), ("worker", False), ("control-worker", False)],
)
def test_only_the_matrix_worker_of_make_up_runs_niced(worker: str, niced: bool, settings, monkeypatch) -> None:
    settings.OME_MATRIX_WORKER_NICENESS = 7
    calls: list[int] = []
    monkeypatch.setattr(celery.os, "nice", calls.append)

    celery._matrix_worker_yields("worker@host", worker_of(queues_of(worker)))

    assert calls == ([7] if niced else [])


def test_a_niceness_of_zero_leaves_the_priority_alone(settings, monkeypatch) -> None:
    settings.OME_MATRIX_WORKER_NICENESS = 0
    calls: list[int] = []
    monkeypatch.setattr(celery.os, "nice", calls.append)

    celery._matrix_worker_yields("worker@host", worker_of(["matrix"]))

    assert calls == []
