"""Issue 19's read-path findings, tried as a tenant: a viewer of namespace team-a of cluster
tenants, beside team-b and a second cluster (bravo-cluster), with DEBUG and anonymous reads off.
Each read answers without team-b's or the other cluster's names, and a hidden object answers as
a missing one."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

import matching
from inventory.models import Cluster, Resource
from lint.models import LintAcknowledgement
from matrix.models import CellChange
from patches.models import PatchAttempt
from tests.support.answers import answer

from .conftest import LEAKS, signed_in, user_with

pytestmark = pytest.mark.django_db


def leaked(response: Any) -> list[str]:
    text = response.content.decode()
    return [word for word in (*LEAKS, "bravo-cluster") if word in text]


def resource_id(cluster: Cluster, name: str) -> int:
    return Resource.objects.get(cluster=cluster, name=name).pk


def bravo_patch(cluster: Cluster, author: Any) -> PatchAttempt:
    return PatchAttempt.objects.create(
        user=author,
        username=author.get_username(),
        cluster_name=cluster.name,
        model_kind="BaseModel",
        model_namespace="team-b",
        model_name="bravo-model",
        result=PatchAttempt.Result.APPLIED,
        target=PatchAttempt.Target.INVENTORY,
    )


@pytest.mark.parametrize(
    "query", ["", "?cluster=tenants", "?cluster=tenants&namespace=team-b"], ids=["no-cluster", "cluster", "namespace"]
)
def test_history_shows_only_the_readers_namespaces_and_clusters(
    tenants: Cluster, other_cluster: Cluster, viewer_a: Any, query: str
) -> None:
    assert CellChange.objects.filter(cluster=tenants, namespace="team-b").exists()

    response = signed_in(viewer_a).get(f"/history/{query}")

    assert response.status_code == 200
    assert leaked(response) == []
    assert "alpha-model" in response.content.decode()


def test_history_of_a_patch_needs_its_record_to_be_readable(
    tenants: Cluster, viewer_a: Any, django_user_model: Any
) -> None:
    admin = user_with(django_user_model, "admin-t", "admin", cluster="tenants")
    attempt = bravo_patch(tenants, admin)
    outsider = user_with(django_user_model, "viewer-whole", "viewer", cluster="tenants")
    hidden, missing = (
        f"/history/?cluster=tenants&patch={attempt.pk}",
        f"/history/?cluster=tenants&patch={attempt.pk + 99}",
    )

    for reader in (viewer_a, outsider):
        client = signed_in(reader)
        shown, absent = client.get(hidden), client.get(missing)
        # No audit permission, not the author: the record answers as one that does not exist.
        assert shown.status_code == 404
        asked = (attempt.pk, attempt.pk + 99)
        assert answer(shown, asked) == answer(absent, asked)
    assert signed_in(admin).get(hidden).status_code == 200


def test_near_misses_resolve_only_ids_the_reader_reads(
    tenants: Cluster, other_cluster: Cluster, viewer_a: Any, django_user_model: Any
) -> None:
    nobody = signed_in(user_with(django_user_model, "no-role", None))
    missing = max(Resource.objects.values_list("pk", flat=True)) + 1
    url = "/api/v1/matrix/near-misses/?model={}"

    for model in (resource_id(tenants, "shared-llama"), resource_id(other_cluster, "bravo-elsewhere")):
        hidden, absent = nobody.get(url.format(model)), nobody.get(url.format(missing))
        assert hidden.status_code == absent.status_code == 400
        assert hidden.json()["detail"].replace(str(model), "ID") == absent.json()["detail"].replace(str(missing), "ID")
    reader = signed_in(viewer_a)
    assert reader.get(url.format(resource_id(tenants, "shared-llama"))).status_code == 200
    assert reader.get(url.format(resource_id(tenants, "bravo-model"))).status_code == 400


def test_a_hidden_runtime_answers_as_a_missing_one(tenants: Cluster, other_cluster: Cluster, viewer_a: Any) -> None:
    client = signed_in(viewer_a)
    model = resource_id(tenants, "alpha-model")
    missing = max(Resource.objects.values_list("pk", flat=True)) + 1
    base = f"/api/v1/matrix/near-misses/?model={model}&runtime="
    absent = client.get(f"{base}{missing}")

    for runtime in (resource_id(other_cluster, "bravo-rt-elsewhere"), resource_id(tenants, "bravo-runtime")):
        hidden = client.get(f"{base}{runtime}")
        assert hidden.status_code == absent.status_code == 400
        assert hidden.json()["detail"].replace(str(runtime), "ID") == absent.json()["detail"].replace(
            str(missing), "ID"
        )
        assert "another cluster" not in hidden.content.decode()


def test_lint_acknowledgements_list_only_groups_the_reader_reads(
    tenants: Cluster, viewer_a: Any, django_user_model: Any
) -> None:
    admin = user_with(django_user_model, "admin-t", "admin", cluster="tenants")
    # An acknowledgement of a group about team-b (withdrawn records stay, groups come and go).
    LintAcknowledgement.objects.create(
        cluster=tenants,
        key="runtime-matches-nothing:ServingRuntime/team-b/bravo-runtime",
        signature="s",
        title="ServingRuntime team-b/bravo-runtime matches no model",
        reason="known",
        user=admin,
        username=admin.get_username(),
    )

    response = signed_in(viewer_a).get("/api/v1/matrix/lint/acknowledgements/?cluster=tenants")
    whole = signed_in(admin).get("/api/v1/matrix/lint/acknowledgements/?cluster=tenants")

    assert response.status_code == 200
    assert (response.json()["results"], leaked(response)) == ([], [])
    assert "bravo-runtime" in whole.content.decode()


@pytest.mark.parametrize("page", ["/history/", "/matrix/upgrade/"])
def test_cluster_choosers_list_only_clusters_the_reader_has_a_role_on(
    tenants: Cluster, other_cluster: Cluster, viewer_a: Any, page: str
) -> None:
    response = signed_in(viewer_a).get(f"{page}?cluster=tenants")

    assert response.status_code == 200
    assert 'value="tenants"' in response.content.decode()
    assert "bravo-cluster" not in response.content.decode()


def test_a_cluster_without_a_role_is_no_choice_of_the_upgrade_page(
    tenants: Cluster, other_cluster: Cluster, viewer_a: Any
) -> None:
    client = signed_in(viewer_a)

    hidden, absent = (
        client.get("/matrix/upgrade/?cluster=bravo-cluster"),
        client.get("/matrix/upgrade/?cluster=nowhere"),
    )

    assert hidden.status_code == absent.status_code == 404


@pytest.mark.parametrize("profile", list(matching.BEHAVIOURS))
def test_the_upgrade_report_names_only_the_readers_objects(tenants: Cluster, viewer_a: Any, profile: str) -> None:
    client: Client = signed_in(viewer_a)

    page = client.get(f"/matrix/upgrade/?cluster=tenants&to={profile}")
    api = client.get(f"/api/v1/matrix/upgrade/?cluster=tenants&to={profile}")

    assert (page.status_code, api.status_code) == (200, 200)
    assert leaked(page) == leaked(api) == []
