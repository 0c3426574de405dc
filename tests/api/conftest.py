"""The demo cluster with its matrix, built once per test module (the API tests only read it, or
change it inside their own rolled-back transaction), and API clients."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from pytest_django import Settings
from rest_framework.test import APIClient


@pytest.fixture(autouse=True)
def _no_matrix_tasks(settings: Settings) -> None:
    # Inventory changes made by a test are applied to the matrix by the test itself, not queued.
    settings.MATRIX_UPDATE_ON_CHANGE = False


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def wsgi_app() -> Iterator[WSGIHandler]:
    """The application as a WSGI callable for in-process clients (schemathesis, httpx), which,
    unlike Django's test client, do not keep the request signals from closing the database
    connection, and with it the test's transaction (PostgreSQL): kept from it here the same way."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)
