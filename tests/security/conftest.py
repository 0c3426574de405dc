"""A cluster with two tenants, users with roles on one of them, and the production defaults.

`tenants` holds, besides cluster-scoped objects every reader of the cluster sees, team-a's and
team-b's objects. Every name of team-b starts with "bravo" (and its namespace is "team-b"), so a
read path that leaks shows it in its text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client
from pytest_django import Settings

from inventory.models import Cluster
from inventory.services import ClusterSpec, cluster_register, manifests_load
from matrix.models import CellChange
from matrix.services import matrix_rebuild
from tests.inventory.live.objects import isvc, model, runtime

# The seed case as a manifest snapshot and as a live (fake) cluster, for the patch tests.
from tests.patches.conftest import fake, live, manifest_files, snapshot  # noqa: F401
from tests.support.access import grant

LEAKS = ("bravo", "team-b")


def tenant_objects() -> list[dict[str, Any]]:
    return [
        model("shared-llama"),
        runtime("shared-runtime"),
        model("alpha-model", "team-a"),
        runtime("alpha-runtime", "team-a"),
        isvc("alpha-isvc", "team-a", model_name="shared-llama"),
        model("bravo-model", "team-b", architecture="MistralForCausalLM"),
        runtime("bravo-runtime", "team-b", architecture="MistralForCausalLM"),
        isvc("bravo-isvc", "team-b", model_name="shared-llama"),
    ]


@pytest.fixture(autouse=True)
def production_defaults(settings: Settings) -> None:
    """What a deployment runs with: no anonymous reads, DEBUG off (the test runner's too)."""
    settings.API_ANONYMOUS_READ = False
    settings.DEBUG = False
    settings.MATRIX_UPDATE_ON_CHANGE = False


@pytest.fixture
def tenants(db: None, tmp_path: Path) -> Cluster:
    folder = tmp_path / "tenants"
    folder.mkdir()
    (folder / "objects.yaml").write_text(yaml.safe_dump_all(tenant_objects()))
    cluster = cluster_register(ClusterSpec("tenants", Cluster.Source.MANIFESTS, manifests=(str(folder),)))
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    for namespace, name in (("team-a", "alpha-model"), ("team-b", "bravo-model")):
        CellChange.objects.create(
            cluster=cluster,
            model_kind="BaseModel",
            model_namespace=namespace,
            model_name=name,
            runtime_kind="ClusterServingRuntime",
            runtime_name="shared-runtime",
            namespace=namespace,
            old_status="excluded",
            new_status="selected",
        )
    return cluster


@pytest.fixture
def other_cluster(db: None, tmp_path: Path) -> Cluster:
    """A second cluster nobody in these tests has a role on."""
    folder = tmp_path / "other"
    folder.mkdir()
    (folder / "objects.yaml").write_text(yaml.safe_dump_all([model("bravo-elsewhere"), runtime("bravo-rt-elsewhere")]))
    cluster = cluster_register(ClusterSpec("bravo-cluster", Cluster.Source.MANIFESTS, manifests=(str(folder),)))
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    return cluster


def user_with(django_user_model: Any, username: str, role: str | None, **where: str) -> Any:
    user = django_user_model.objects.create_user(username)
    if role is not None:
        grant(user, role, **where)
    return user


@pytest.fixture
def viewer_a(django_user_model: Any) -> Any:
    """Viewer of namespace team-a of cluster tenants, nothing else."""
    return user_with(django_user_model, "viewer-a", "viewer", cluster="tenants", namespace="team-a")


@pytest.fixture
def patcher_a(django_user_model: Any) -> Any:
    """Patcher of namespace team-a of cluster tenants, nothing else."""
    return user_with(django_user_model, "patcher-a", "patcher", cluster="tenants", namespace="team-a")


def signed_in(user: Any) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client
