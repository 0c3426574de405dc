"""OME version: say what is known. A cluster whose version is unknown says so on every page and
in the API, and the upgrade page explains its 0 differences and offers an administrator the
choice of version; verdicts carry the profile of the build that produced them, a pending
profile change shows as pending."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

import matching
from inventory.models import Cluster, Kind, SyncState
from inventory.ome_release import judge, ome_version_set_admin
from matrix.models import MatrixBuild
from tests.support.access import grant
from web.api.matrix.base import build_ome

pytestmark = pytest.mark.django_db


@pytest.fixture
def live() -> Cluster:
    return Cluster.objects.create(name="live", source=Cluster.Source.KUBECONFIG, kubeconfig="/nowhere")


@pytest.fixture
def admin_client(client: Client, django_user_model: Any) -> Client:
    user = django_user_model.objects.create_user(username="admin-of-all", password="x")
    grant(user, "admin")
    client.force_login(user)
    return client


def test_an_unknown_version_says_so_and_why_0_differences_is_the_answer(admin_client: Client, live: Cluster) -> None:
    html = admin_client.get("/matrix/upgrade/", {"cluster": "live"}).content.decode()

    assert 'data-version-known="false"' in html
    assert "This cluster&#x27;s OME version is unknown" in html or "This cluster's OME version is unknown" in html
    assert "0 differences is the answer by construction" in html
    assert 'action="/sync/live/ome-version/"' in html


def test_an_administrator_sets_the_version_from_the_page(admin_client: Client, live: Cluster) -> None:
    response = admin_client.post(
        "/sync/live/ome-version/", {"version": "v0.1.5", "next": "/matrix/upgrade/?cluster=live"}
    )

    live.refresh_from_db()
    assert response.status_code == 302
    assert response["Location"] == "/matrix/upgrade/?cluster=live"
    assert judge(live).known
    assert judge(live).version == "v0.1.5"


def test_a_viewer_may_not_set_the_version(client: Client, django_user_model: Any, live: Cluster) -> None:
    viewer = django_user_model.objects.create_user(username="v", password="x")
    grant(viewer, "viewer")
    client.force_login(viewer)

    page = client.get("/matrix/upgrade/", {"cluster": "live"}).content.decode()
    response = client.post("/sync/live/ome-version/", {"version": "v0.1.5"})

    assert "manage.py ome_version live --set VERSION" in page
    assert response.status_code == 403
    assert not judge(Cluster.objects.get(pk=live.pk)).known


def test_the_reason_is_not_not_synced_yet_once_a_sync_ran(live: Cluster) -> None:
    assert "not synced yet" in judge(live).why
    SyncState.objects.create(cluster=live, kind=Kind.BASE_MODEL, last_list_at="2026-01-01T00:00:00Z")

    assert "not synced yet" not in judge(live).why
    assert judge(live).to_dict()["version_known"] is False


def test_verdicts_carry_the_profile_of_their_build_and_a_change_is_pending(cluster: Cluster, settings: Any) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    build = MatrixBuild.objects.filter(cluster=cluster, status=MatrixBuild.Status.SUCCEEDED).latest("pk")
    built_with = build_ome(build)["profile"]
    other = next(name for name in matching.BEHAVIOURS if name != built_with)

    ome_version_set_admin(cluster, other)
    ome = build_ome(MatrixBuild.objects.get(pk=build.pk))  # as a request reads it
    cells = APIClient().get("/api/v1/matrix/cells/", {"cluster": cluster.name})

    assert ome["profile"] == built_with
    assert ome["pending"]["profile"] == other  # type: ignore[index]
    assert "is pending" in str(ome["why"])
    assert cells.json()["ome"]["profile"] == built_with
    assert cells["X-OME-Behaviour"].startswith(f"profile={built_with};")
