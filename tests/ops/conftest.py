"""Fixtures for the operations tests: a small cluster with its matrix, and a Redis of their own
that a test may stop and start again without disturbing the rest of the suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery import Celery
from django.test import override_settings

from inventory.models import Cluster
from inventory.services import ClusterSpec, cluster_register, manifests_load
from matrix.services import matrix_rebuild
from tests.patches.seed import SEED_FILES
from tests.support.celery_worker import point_app_at_redis
from tests.support.redis_server import RedisServer


@pytest.fixture
def seed(db: None, settings: Any) -> Cluster:
    """The seed page's case as a manifest snapshot (a few models and runtimes), with its matrix."""
    settings.MATRIX_UPDATE_ON_CHANGE = False
    cluster = cluster_register(ClusterSpec("seed", Cluster.Source.MANIFESTS, manifests=tuple(map(str, SEED_FILES))))
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    return cluster


@pytest.fixture
def seed_committed(transactional_db: None, settings: Any) -> Cluster:
    """The same, committed, for tests whose worker threads or processes read it (its build asks
    for no lint proofs: the queues hold only what a test queues)."""
    settings.MATRIX_UPDATE_ON_CHANGE = False
    settings.LINT_PROVE_ON_UPDATE = False
    cluster = cluster_register(ClusterSpec("seed", Cluster.Source.MANIFESTS, manifests=tuple(map(str, SEED_FILES))))
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    return cluster


class StoppableRedis:
    """A redis-server on a fixed port that can be stopped and started again (same port, so every
    client configured with its URL reconnects when it is back)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.server = RedisServer(data_dir=data_dir)
        self.port = self.server.port
        self.url = self.server.url

    def start(self) -> None:
        self.server = RedisServer(data_dir=self.data_dir, port=self.port)
        self.server.start()

    def stop(self) -> None:
        self.server.stop()


@pytest.fixture
def own_redis(tmp_path: Path, celery_app: Celery, redis_server: RedisServer) -> Iterator[StoppableRedis]:
    """Celery, REDIS_URL and the readiness check pointed at a Redis of this test's own; the
    session's Redis is back in place afterwards."""
    redis = StoppableRedis(tmp_path / "redis")
    redis.start()
    urls = {"REDIS_URL": redis.url, "CELERY_BROKER_URL": redis.url, "CELERY_RESULT_BACKEND": redis.url}
    with override_settings(**urls):
        point_app_at_redis(celery_app, redis.url)
        try:
            yield redis
        finally:
            redis.stop()
            point_app_at_redis(celery_app, redis_server.url)
