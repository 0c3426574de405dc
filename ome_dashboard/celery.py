"""The Celery application. Configuration comes from Django settings (the ``CELERY_`` names)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ome_dashboard.settings")

app = Celery("ome_dashboard")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="ome_dashboard.debug_ping")
def debug_ping() -> str:
    """Answer "pong": proves that a worker consumes from the broker and writes results back."""
    return "pong"
