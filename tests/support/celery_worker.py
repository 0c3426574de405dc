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
    # Celery would otherwise replace the root logger's handlers, pytest's log capture among them.
    app.conf.worker_hijack_root_logger = False
    # Not the `watch` queue unless asked: a watch left there by another test would hold the solo pool.
    options = {
        "pool": "solo",
        "loglevel": "WARNING",
        # start_worker's own check sends `celery.ping`, whose result the project ignores
        # (CELERY_TASK_IGNORE_RESULT); debug_ping keeps its result.
        "perform_ping_check": False,
        "shutdown_timeout": 10,
        "queues": ["celery", "control", "matrix"],
        **options,
    }
    with start_worker(app, **options) as worker:
        assert app.send_task("ome_dashboard.debug_ping", ignore_result=False).get(timeout=60) == "pong"
        yield worker
