"""A real Celery worker against a real Redis runs the project's tasks."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from celery import Celery
from celery.worker import WorkController
from django.contrib.auth.models import User

from ome_dashboard.celery import app, debug_ping
from tests.support.celery_worker import point_app_at_redis, running_worker
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.integration


@app.task(name="tests.count_users", ignore_result=False)
def count_users() -> int:
    return User.objects.count()


def test_worker_runs_debug_ping_through_redis(celery_worker: WorkController) -> None:
    result = debug_ping.delay()

    assert result.get(timeout=10) == "pong"


@pytest.mark.django_db(transaction=True)
def test_worker_sees_rows_the_test_committed(celery_worker: WorkController) -> None:
    User.objects.create(username="alice")

    assert count_users.delay().get(timeout=10) == 1


def test_pointing_the_app_at_redis_replaces_a_backend_made_for_another_url(
    celery_app: Celery, redis_server: RedisServer
) -> None:
    point_app_at_redis(celery_app, "redis://127.0.0.1:9/0")
    assert celery_app.backend.url == "redis://127.0.0.1:9/0"

    point_app_at_redis(celery_app, redis_server.url)

    with running_worker(celery_app):
        assert debug_ping.delay().get(timeout=10) == "pong"


def test_a_running_worker_keeps_its_alive_file_fresh_and_removes_it_when_it_stops(
    celery_app: Celery, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alive = tmp_path / "celery-alive"
    monkeypatch.setenv("CELERY_ALIVE_FILE", str(alive))

    with running_worker(celery_app):
        touched = alive.stat().st_mtime

    assert time.time() - touched < 60  # what the pods' livenessProbe checks
    assert not alive.exists()
