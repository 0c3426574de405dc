"""Who may read and write: anonymous reads by setting, token and session logins, and the
Django permission that registering a cluster needs."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.http import HttpRequest
from pytest_django import Settings
from rest_framework.test import APIClient

from access.tokens import api_token_create
from inventory.models import Cluster
from tests.support.access import grant
from tests.support.kubeconfigs import write_kubeconfig

pytestmark = pytest.mark.django_db

READS = ["/api/v1/", "/api/v1/clusters/", "/api/v1/models/", "/api/v1/matrix/history/", "/api/v1/sync-states/"]


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def alice() -> User:
    return User.objects.create_user("alice", password="alice-password")


@pytest.fixture
def admin_of_clusters() -> User:
    user = User.objects.create_user("carol", password="carol-password")
    user.user_permissions.add(Permission.objects.get(codename="add_cluster", content_type__app_label="inventory"))
    return user


@pytest.mark.parametrize("url", READS)
def test_anonymous_users_read_while_the_setting_allows_it(api: APIClient, settings: Settings, url: str) -> None:
    settings.API_ANONYMOUS_READ = True

    assert api.get(url).status_code == 200


@pytest.mark.parametrize("url", READS)
def test_without_anonymous_reads_a_login_is_needed(api: APIClient, settings: Settings, url: str) -> None:
    settings.API_ANONYMOUS_READ = False

    response = api.get(url)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {
        "detail": "Authentication credentials were not provided.",
        "code": "not_authenticated",
        "field": None,
    }


def test_a_token_reads_when_anonymous_reads_are_off(api: APIClient, settings: Settings, alice: User) -> None:
    settings.API_ANONYMOUS_READ = False
    _, key = api_token_create(alice, name="test")

    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert api.get("/api/v1/models/").status_code == 200


def test_a_session_reads_when_anonymous_reads_are_off(api: APIClient, settings: Settings, alice: User) -> None:
    settings.API_ANONYMOUS_READ = False

    # django-axes checks every password sign-in, and needs the request to do it.
    assert api.login(request=HttpRequest(), username="alice", password="alice-password")

    assert api.get("/api/v1/clusters/").status_code == 200


def test_a_bad_token_is_refused_even_for_reads(api: APIClient) -> None:
    api.credentials(HTTP_AUTHORIZATION="Token not-a-token")

    response = api.get("/api/v1/models/")

    assert response.status_code == 401
    assert response.json()["code"] == "authentication_failed"


def test_registering_a_cluster_needs_a_login(api: APIClient) -> None:
    response = api.post("/api/v1/clusters/", {"name": "prod", "source": "in-cluster"}, format="json")

    assert response.status_code == 401
    assert not Cluster.objects.exists()


def test_registering_a_cluster_needs_the_add_cluster_permission(api: APIClient, alice: User) -> None:
    api.force_authenticate(alice)

    response = api.post("/api/v1/clusters/", {"name": "prod", "source": "in-cluster"}, format="json")

    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert not Cluster.objects.exists()


def test_a_cluster_is_registered_by_name_and_kubeconfig_file(
    api: APIClient, admin_of_clusters: User, settings: Settings, tmp_path: Path
) -> None:
    settings.OME_KUBECONFIG_DIR = tmp_path
    write_kubeconfig(tmp_path / "prod.yaml", context="admin@prod")
    grant(admin_of_clusters, "admin", cluster="prod")
    api.force_authenticate(admin_of_clusters)

    response = api.post(
        "/api/v1/clusters/", {"name": "prod", "source": "kubeconfig:prod.yaml#admin@prod"}, format="json"
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["name"], body["source"], body["kubeconfig"], body["context"]) == (
        "prod",
        "kubeconfig",
        str(tmp_path / "prod.yaml"),
        "admin@prod",
    )
    assert body["sync"] == []
    stored = Cluster.objects.get(name="prod")
    assert (stored.kubeconfig, stored.context) == (str(tmp_path / "prod.yaml"), "admin@prod")


def test_a_session_write_needs_the_csrf_token(admin_of_clusters: User) -> None:
    api = APIClient(enforce_csrf_checks=True)
    api.login(request=HttpRequest(), username="carol", password="carol-password")

    response = api.post("/api/v1/clusters/", {"name": "prod", "source": "in-cluster"}, format="json")

    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "prod", "source": "in-cluster", "token": "s3cr3t-bearer-token"}, "token"),
        ({"name": "prod", "source": "kubeconfig:apiVersion: v1\nclusters:\n- token: s3cr3t-bearer-token"}, "source"),
        ({"name": "prod", "source": "s3cr3t-bearer-token"}, "source"),
        ({"name": "prod"}, "source"),
        ({"name": "Not A Slug", "source": "in-cluster"}, "name"),
        ({"name": "prod", "source": "manifests:a;other=in-cluster"}, "source"),
    ],
    ids=["unknown-field", "inline-kubeconfig", "bad-source", "missing-source", "bad-name", "two-entries"],
)
def test_a_bad_registration_names_the_field_and_never_echoes_a_secret(
    api: APIClient, admin_of_clusters: User, body: dict[str, str], field: str
) -> None:
    api.force_authenticate(admin_of_clusters)

    response = api.post("/api/v1/clusters/", body, format="json")

    assert response.status_code == 400
    assert response.json()["field"] == field
    assert b"s3cr3t" not in response.content
    assert not Cluster.objects.exists()


def test_a_cluster_name_is_registered_once(api: APIClient, admin_of_clusters: User) -> None:
    api.force_authenticate(admin_of_clusters)
    Cluster.objects.create(name="prod", source=Cluster.Source.IN_CLUSTER)

    response = api.post("/api/v1/clusters/", {"name": "prod", "source": "kubeconfig:prod.yaml"}, format="json")

    assert response.status_code == 400
    assert (response.json()["field"], response.json()["code"]) == ("name", "unique")
    assert Cluster.objects.get(name="prod").source == "in-cluster"


def test_read_only_lists_refuse_writes_even_with_permissions(api: APIClient, admin_of_clusters: User) -> None:
    admin_of_clusters.is_superuser = True
    admin_of_clusters.save()
    api.force_authenticate(admin_of_clusters)

    assert api.post("/api/v1/models/", {}, format="json").status_code == 403
    assert api.delete("/api/v1/clusters/demo/").status_code == 403
