"""Fixtures shared by the whole suite. The helpers behind them are in tests/support/.

Every test process starts its own redis-server and points Celery (and settings.REDIS_URL) at it
before the first test, so no test ever enqueues into a Redis on the default port.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from celery.worker import WorkController
from django.test import override_settings

from inventory.models import Cluster
from ome_dashboard.celery import app as ome_celery_app
from tests.support.celery_worker import point_app_at_redis, running_worker
from tests.support.demo import stored_demo
from tests.support.redis_server import RedisServer, running_redis


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server on a free loopback port, one per pytest(-xdist) process."""
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="session", autouse=True)
def celery_app(redis_server: RedisServer) -> Iterator[Celery]:
    """The project's Celery app, publishing to and reading results from the session's Redis."""
    url = redis_server.url
    with override_settings(REDIS_URL=url, CELERY_BROKER_URL=url, CELERY_RESULT_BACKEND=url):
        point_app_at_redis(ome_celery_app, url)
        yield ome_celery_app


@pytest.fixture(scope="session", autouse=True)
def kubeconfig_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Kubeconfigs may only come from settings.OME_KUBECONFIG_DIR: tests write theirs to
    pytest's temporary folder (every `tmp_path` is inside it), which is that folder here."""
    folder = tmp_path_factory.getbasetemp()
    with override_settings(OME_KUBECONFIG_DIR=folder):
        yield folder


@pytest.fixture
def celery_worker(celery_app: Celery) -> Iterator[WorkController]:
    """A real worker thread consuming from Redis for the duration of one test.

    Tests that let the worker read rows they created need `transactional_db`.
    """
    with running_worker(celery_app) as worker:
        yield worker


@pytest.fixture(scope="module")
def demo(django_db_setup: None, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """The bundled demo cluster with its matrix, committed once per test module."""
    with stored_demo(django_db_blocker, tmp_path_factory.getbasetemp().parent) as cluster:
        yield cluster


@pytest.fixture
def measured_cell_lists(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every matrix.paging.CellList that counts its rows during the test, in order (the
    cached lists of a repeated query must not count again)."""
    from matrix.paging import CellList

    measured: list[CellList] = []
    measure = CellList._measure

    def measuring(cell_list: CellList) -> Any:
        measured.append(cell_list)
        return measure(cell_list)

    monkeypatch.setattr(CellList, "_measure", measuring)
    return measured


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The image test's timings (tests/ops/test_image_run.py), also when xdist ran it (so here:
    xdist's controller loads this conftest, not the ones of subfolders)."""
    # Recorded at teardown: the report of that phase carries it.
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, value in getattr(report, "user_properties", ()):
                if name == "image_timings" and getattr(report, "when", None) == "teardown":
                    terminalreporter.write_line(str(value))
