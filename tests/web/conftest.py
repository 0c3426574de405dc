"""Fixtures of the HTML page tests: the bundled demo cluster with its matrix, loaded once per
test module (committed, then deleted again), and users with and without the patch permission."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from inventory.models import Cluster, Resource
from lint.proving import lint_proofs_refresh
from matrix.models import MatrixBuild
from ome_dashboard.celery import app as celery_app
from tests.support.access import grant

SEED_MODEL = "qwen-image-pvc"
SEED_RUNTIME = "srt-qwen-image-pipeline"
CATALOG_RUNTIME = "srt-qwen-image"
PASSWORD = "correct horse battery staple"
HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def cluster(demo: Cluster, db: None) -> Cluster:
    return demo


@pytest.fixture(scope="module")
def proven_demo(demo: Cluster, django_db_blocker: Any) -> Cluster:
    """The demo with its lint fixes proven and stored, as the proving task leaves it after the
    matrix build (lint.proving)."""
    with django_db_blocker.unblock():
        lint_proofs_refresh(demo)
    return demo


@pytest.fixture
def seed_model(cluster: Cluster) -> Resource:
    return Resource.objects.get(cluster=cluster, kind="ClusterBaseModel", name=SEED_MODEL)


@pytest.fixture
def seed_runtime(cluster: Cluster) -> Resource:
    return Resource.objects.get(cluster=cluster, kind="ClusterServingRuntime", name=SEED_RUNTIME)


@pytest.fixture
def catalog_runtime(cluster: Cluster) -> Resource:
    return Resource.objects.get(cluster=cluster, kind="ClusterServingRuntime", name=CATALOG_RUNTIME)


@pytest.fixture
def build(cluster: Cluster) -> MatrixBuild:
    return MatrixBuild.objects.get(cluster=cluster, status=MatrixBuild.Status.SUCCEEDED)


def _user(django_user_model: Any, username: str, *roles: str) -> Any:
    user = django_user_model.objects.create_user(username=username, password=PASSWORD)
    for role in roles:
        grant(user, role)
    return user


@pytest.fixture
def viewer(django_user_model: Any, db: None) -> Any:
    """Signed in, without any permission."""
    return _user(django_user_model, "viewer")


@pytest.fixture
def patcher(django_user_model: Any, db: None) -> Any:
    """Signed in, may apply pipeline patches (patcher on every cluster)."""
    return _user(django_user_model, "patcher", "patcher")


@pytest.fixture
def viewer_client(client: Client, viewer: Any) -> Client:
    client.force_login(viewer)
    return client


@pytest.fixture
def patcher_client(client: Client, patcher: Any) -> Client:
    client.force_login(patcher)
    return client


@pytest.fixture
def htmx() -> dict[str, str]:
    """Headers of an htmx request (django-htmx reads HX-Request)."""
    return {"HX-Request": "true"}


@pytest.fixture
def eager_celery() -> Iterator[None]:
    """Run Celery tasks in the caller (the matrix update a patch announces), as the browser tests
    do; the web process enqueues them on a real worker otherwise."""
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = eager
