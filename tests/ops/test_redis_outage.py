"""Redis outages of any length: the processes that enqueue and the workers recover by
themselves once Redis is back, whatever retry budget the outage spent; and kombu's
closed-channel fault (ome_dashboard.kombu_redis) is a connection error the worker recovers
from, not an AttributeError that ends it."""

from __future__ import annotations

import time

import pytest
import redis
from celery import Celery
from kombu import Connection

from ome_dashboard.celery import debug_ping
from tests.ops.conftest import StoppableRedis
from tests.support.celery_worker import running_worker
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.integration

# Longer than every retry budget of the settings: the result backend's (3 retries, at most
# 0.5 s apart), publishing's (3 retries), the socket connect timeout (5 s).
OUTAGE_AT_LEAST = 12.0


def test_a_channel_of_a_closed_connection_raises_a_connection_error(redis_server: RedisServer) -> None:
    connection = Connection(redis_server.url)
    channel = connection.default_channel
    connection.close()  # kombu closes the channel and sets the transport's client to None
    channel._disconnect_pools()

    with pytest.raises(redis.exceptions.ConnectionError, match="closed"):
        channel.pool  # noqa: B018  # builds a pool: the attribute access is the act
    assert issubclass(redis.exceptions.ConnectionError, connection.connection_errors)


def test_after_an_outage_longer_than_every_retry_budget_enqueueing_and_the_worker_recover(
    own_redis: StoppableRedis, celery_app: Celery
) -> None:
    with running_worker(celery_app):
        assert debug_ping.delay().get(timeout=30) == "pong"
        own_redis.stop()
        started, failures = time.monotonic(), 0
        while time.monotonic() - started < OUTAGE_AT_LEAST:
            with pytest.raises(Exception, match=r"(?i)connect|retry|refused"):
                debug_ping.delay()
            failures += 1
        own_redis.start()

        assert failures >= 2
        assert debug_ping.delay().get(timeout=60) == "pong"
        assert debug_ping.delay().get(timeout=60) == "pong"
