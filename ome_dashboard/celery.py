"""The Celery application. Configuration comes from Django settings (the ``CELERY_`` names)."""

from __future__ import annotations

import os

from celery import Celery

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
