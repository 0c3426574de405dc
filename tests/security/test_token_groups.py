"""Through an API token, grants to its OIDC user's groups hold only while a sign-in read those
groups at most OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS ago: a token is never renewed at the
identity provider. After that the token acts with the user's own grants (and their Django
groups') until the next sign-in, cluster RBAC sees no OIDC group, and every answer says why in
the OME-Token-Groups header. Sessions renew their groups themselves and are unaffected."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone
from rest_framework.test import APIClient

from access.models import Grant, Identity, Role
from access.oidc import identity_from_claims
from access.scope import scope_for_user
from access.tokens import GROUPS_NOTICE_HEADER, ApiTokenAuthentication, api_token_create
from inventory.models import Cluster

from .conftest import signed_in

CLAIMS = {"sub": "00u-ada", "preferred_username": "ada", "groups": ["ml-platform"]}


@pytest.fixture
def ada(tenants: Cluster, django_user_model: Any) -> Any:
    """An OIDC user who reads namespace team-a herself and all of cluster tenants through her group."""
    user = django_user_model.objects.create_user("ada")
    identity_from_claims(user, CLAIMS)  # what each sign-in stores (access.oidc.OidcBackend)
    Grant.objects.create(user=user, cluster="tenants", namespace="team-a", role=Role.VIEWER)
    Grant.objects.create(group="oidc:ml-platform", cluster="tenants", role=Role.VIEWER)
    return user


@pytest.fixture
def token_client(ada: Any) -> APIClient:
    _token, key = api_token_create(ada, name="ci")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def groups_read_ago(user: Any, age: timedelta | None) -> None:
    Identity.objects.filter(user=user).update(groups_read_at=None if age is None else timezone.now() - age)


def models_read(response: Any) -> set[str]:
    assert response.status_code == 200, response.content[:300]
    return {row["name"] for row in response.json()["results"]}


def test_freshly_read_groups_count_through_a_token(ada: Any, token_client: APIClient) -> None:
    groups_read_ago(ada, timedelta(hours=23))

    response = token_client.get("/api/v1/models/")

    assert {"alpha-model", "bravo-model"} <= models_read(response)
    assert GROUPS_NOTICE_HEADER not in response


@pytest.mark.parametrize("age", [timedelta(hours=25), None], ids=["older-than-24h", "never-recorded"])
def test_groups_read_too_long_ago_do_not_count_through_a_token_and_the_answer_says_why(
    ada: Any, token_client: APIClient, age: timedelta | None
) -> None:
    groups_read_ago(ada, age)

    through_token = token_client.get("/api/v1/models/")
    hidden = token_client.get("/api/v1/models/", {"namespace": "team-b"})
    in_session = signed_in(ada).get("/api/v1/models/")

    assert "alpha-model" in models_read(through_token)
    assert "bravo-model" not in models_read(through_token)
    assert "OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS" in through_token[GROUPS_NOTICE_HEADER]
    assert "signs in again" in hidden[GROUPS_NOTICE_HEADER]
    assert {"alpha-model", "bravo-model"} <= models_read(in_session)
    assert GROUPS_NOTICE_HEADER not in in_session


def test_the_next_sign_in_gives_the_token_its_groups_back(ada: Any, token_client: APIClient) -> None:
    groups_read_ago(ada, timedelta(days=3))
    before = token_client.get("/api/v1/models/")

    identity_from_claims(ada, CLAIMS)  # a sign-in
    after = token_client.get("/api/v1/models/")

    assert "bravo-model" not in models_read(before)
    assert "bravo-model" in models_read(after)
    assert GROUPS_NOTICE_HEADER not in after


def test_the_age_is_a_setting(ada: Any, token_client: APIClient, settings: Any) -> None:
    settings.OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS = 48
    groups_read_ago(ada, timedelta(hours=25))

    assert "bravo-model" in models_read(token_client.get("/api/v1/models/"))


def test_a_token_with_stale_groups_keeps_django_groups_and_sends_the_cluster_no_oidc_group(ada: Any) -> None:
    staff = Group.objects.create(name="staff")
    ada.groups.add(staff)
    Grant.objects.create(group="staff", cluster="other", role=Role.PATCHER)
    groups_read_ago(ada, timedelta(hours=25))
    _token, key = api_token_create(ada, name="ci")
    user, _ = ApiTokenAuthentication().authenticate_credentials(key)

    scope = scope_for_user(user)

    assert scope.may_patch("other", "team-a")
    assert scope.reads("tenants", "team-a")
    assert not scope.reads("tenants", "team-b")
    assert (scope.actor.kube_user, scope.actor.kube_groups) == ("oidc:ada", ())
    assert scope_for_user(ada).reads("tenants", "team-b")  # the same user, signed in
