"""The Celery application. Configuration comes from Django settings (the ``CELERY_`` names)."""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import celeryd_after_setup

from .alive import AliveFile
from .kombu_redis import patch_kombu_redis

patch_kombu_redis()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ome_dashboard.settings")

app = Celery("ome_dashboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.steps["worker"].add(AliveFile)


# The one task whose result is kept (CELERY_TASK_IGNORE_RESULT): it proves the round trip.
@app.task(name="ome_dashboard.debug_ping", ignore_result=False)
def debug_ping() -> str:
    """Answer "pong": proves that a worker consumes from the broker and writes results back."""
    return "pong"


@celeryd_after_setup.connect
def _matrix_worker_yields(sender: str, instance: Any, **_: Any) -> None:
    """A worker of the `matrix` queue alone runs at a lower CPU priority (OME_MATRIX_WORKER_NICENESS;
    its pool processes inherit it): on a busy machine the watch worker keeps the inventory level
    and the web answers, and the matrix follows them."""
    from django.conf import settings

    queues = instance.app.amqp.queues
    if set(queues.consume_from or queues) == {"matrix"} and settings.OME_MATRIX_WORKER_NICENESS:
        os.nice(settings.OME_MATRIX_WORKER_NICENESS)
