"""The demo cluster with its matrix, built once per test module (the API tests only read it, or
change it inside their own rolled-back transaction), and API clients."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings
from pytest_django import DjangoDbBlocker, Settings
from rest_framework.test import APIClient

from compat.services import matrix_rebuild
from inventory.models import Cluster
from inventory.services import cluster_register, manifests_load, parse_cluster_setting


@pytest.fixture(scope="module")
def demo(django_db_setup: None, django_db_blocker: DjangoDbBlocker) -> Iterator[Cluster]:
    # Committed outside the tests' transactions, so every test of the module sees it; deleted at
    # the end so that other modules of this worker start from an empty database again.
    with django_db_blocker.unblock(), override_settings(MATRIX_UPDATE_ON_CHANGE=False):
        cluster = cluster_register(parse_cluster_setting("demo=manifests:catalog/runtimes,demo")[0])
        manifests_load(cluster, cluster.manifests, prune=True)
        matrix_rebuild(cluster)
    yield cluster
    with django_db_blocker.unblock():
        Cluster.objects.filter(pk=cluster.pk).delete()


@pytest.fixture(autouse=True)
def _no_matrix_tasks(settings: Settings) -> None:
    # Inventory changes made by a test are applied to the matrix by the test itself, not queued.
    settings.MATRIX_UPDATE_ON_CHANGE = False


@pytest.fixture
def api() -> APIClient:
    return APIClient()
