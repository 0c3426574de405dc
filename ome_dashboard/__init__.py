"""Project wiring for the OME Compat dashboard: settings, URLs, Celery. No domain logic."""

from __future__ import annotations

# Imported here so that @shared_task in every app binds to this app when Django starts.
from .celery import app as celery_app

__all__ = ["celery_app"]
