"""Clusters holding the seed page's case, as a manifest snapshot and as a live (fake) cluster."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission

from inventory.live.resync import cluster_resync
from inventory.models import Cluster
from inventory.services import ClusterSpec, cluster_register, manifests_load
from tests.fakes.kube_api import FakeKubeAPI
from tests.patches.seed import SEED_FILES, TEAM_MODEL, documents
from tests.support.access import grant


@pytest.fixture(autouse=True)
def _no_matrix_tasks(settings: Any) -> None:
    # Inventory changes would enqueue matrix updates; these tests look at the change itself.
    settings.MATRIX_UPDATE_ON_CHANGE = False


@pytest.fixture
def manifest_files(tmp_path: Path) -> list[str]:
    team = tmp_path / "team-a.yaml"
    team.write_text(TEAM_MODEL)
    return [*map(str, SEED_FILES), str(team)]


@pytest.fixture
def snapshot(db: None, manifest_files: list[str]) -> Cluster:
    """A manifest-folder cluster with the seed case."""
    cluster = cluster_register(ClusterSpec("seed", Cluster.Source.MANIFESTS, manifests=tuple(manifest_files)))
    manifests_load(cluster, cluster.manifests, prune=True)
    return cluster


@pytest.fixture
def fake() -> Iterator[FakeKubeAPI]:
    api = FakeKubeAPI().start()
    for obj in documents():
        api.create(copy.deepcopy(obj))
    yield api
    api.stop()
    assert not api.errors, "\n".join(api.errors)


@pytest.fixture
def live(db: None, fake: FakeKubeAPI, tmp_path: Path) -> Cluster:
    """A kubeconfig cluster pointing at the fake API server, synced once."""
    path = fake.write_kubeconfig(tmp_path / "live.kubeconfig")
    cluster = Cluster.objects.create(name="live", source=Cluster.Source.KUBECONFIG, kubeconfig=str(path))
    cluster_resync(cluster)
    fake.clear_requests()
    return cluster


@pytest.fixture
def applier(django_user_model: Any) -> Any:
    user = django_user_model.objects.create_user("ada")  # no password: hashing one takes a second
    grant(user, "patcher")
    return django_user_model.objects.get(pk=user.pk)  # a fresh instance: no cached permissions


@pytest.fixture
def reader(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("bob")


@pytest.fixture
def auditor(django_user_model: Any) -> Any:
    """May read the audit log (patches.view_patchattempt), and has no role."""
    user = django_user_model.objects.create_user("eve")
    user.user_permissions.add(Permission.objects.get(codename="view_patchattempt"))
    return django_user_model.objects.get(pk=user.pk)
