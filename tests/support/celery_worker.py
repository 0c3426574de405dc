"""A real Celery worker, in a thread of the test process, consuming from a real Redis.

In-process on purpose: the worker uses the test database (tests that enqueue work for it need
`transactional_db`, so the worker thread sees committed rows) and tasks defined in test modules.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from celery import Celery
from celery.contrib.testing.worker import start_worker
from celery.worker import WorkController


def point_app_at_redis(app: Celery, redis_url: str) -> None:
    """Use redis_url as broker and result backend, also for a process that already used another URL."""
    app.conf.update(broker_url=redis_url, result_backend=redis_url)
    # Celery caches its broker connection pool, producer pool and result backend on first use
    # (the same attributes it drops after a fork); anything made before this still has the old URL.
    # Only the references go: kombu keeps the pools in a global registry keyed by URL, so closing
    # one here would break the next user of that URL.
    app._pool = None
    app.amqp._producer_pool = None
    app._backend_cache = None
    app._local = threading.local()


@contextmanager
def running_worker(app: Celery, **options: Any) -> Iterator[WorkController]:
    """Start a solo-pool worker thread and yield it once it has answered a ping task; stop it after."""
    # Registers the `celery.ping` task that start_worker's readiness check sends.
    import celery.contrib.testing.tasks  # noqa: F401

    # Celery would otherwise replace the root logger's handlers, pytest's log capture among them.
    app.conf.worker_hijack_root_logger = False
    # Not the `watch` queue unless asked: a watch left there by another test would hold the solo pool.
    options = {
        "pool": "solo",
        "loglevel": "WARNING",
        "perform_ping_check": True,
        "shutdown_timeout": 10,
        "queues": ["celery", "control", "matrix"],
        **options,
    }
    with start_worker(app, **options) as worker:
        yield worker
