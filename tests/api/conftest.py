"""The demo cluster with its matrix, built once per test module (the API tests only read it, or
change it inside their own rolled-back transaction), and API clients."""

from __future__ import annotations

import pytest
from pytest_django import Settings
from rest_framework.test import APIClient


@pytest.fixture(autouse=True)
def _no_matrix_tasks(settings: Settings) -> None:
    # Inventory changes made by a test are applied to the matrix by the test itself, not queued.
    settings.MATRIX_UPDATE_ON_CHANGE = False


@pytest.fixture
def api() -> APIClient:
    return APIClient()
