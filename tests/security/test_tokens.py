"""API tokens expire, record when they were last used, are listed and revoked by their owner
and by an administrator, are stored only as a digest, and cannot mint more tokens."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.utils import timezone
from rest_framework.test import APIClient

from access.models import ApiToken
from access.tokens import api_token_create

from .conftest import signed_in

pytestmark = pytest.mark.django_db


def with_token(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_token_made_from_a_session_works_until_it_expires_and_records_its_last_use(django_user_model: Any) -> None:
    owner = signed_in(django_user_model.objects.create_user("ada"))

    made = owner.post("/api/v1/tokens/", {"name": "ci", "days": 30}, "application/json").json()
    first = with_token(made["key"]).get("/api/v1/tokens/")
    token = ApiToken.objects.get()
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    expired = with_token(made["key"]).get("/api/v1/tokens/")

    assert made["key"].startswith(made["prefix"])
    assert 29 <= (token.expires_at - timezone.now()).days <= 30
    assert first.status_code == 200
    assert [row["last_used_at"] is not None for row in first.json()["results"]] == [True]
    assert made["key"] not in str(ApiToken.objects.values_list())
    assert expired.status_code == 401
    assert "expired" in expired.json()["detail"]


def test_the_answer_that_carries_the_key_is_never_cached(django_user_model: Any) -> None:
    owner = signed_in(django_user_model.objects.create_user("ada"))

    made = owner.post("/api/v1/tokens/", {"name": "ci"}, "application/json")

    assert made.status_code == 201
    assert made["Cache-Control"] == "no-store"
    assert made["Pragma"] == "no-cache"


def test_tokens_get_a_default_lifetime_and_a_longest_one(django_user_model: Any, settings: Any) -> None:
    settings.OME_API_TOKEN_DAYS, settings.OME_API_TOKEN_MAX_DAYS = 7, 90
    owner = signed_in(django_user_model.objects.create_user("ada"))

    default = owner.post("/api/v1/tokens/", {"name": "a"}, "application/json")
    too_long = owner.post("/api/v1/tokens/", {"name": "b", "days": 91}, "application/json")

    assert default.status_code == 201
    assert (ApiToken.objects.get().expires_at - timezone.now()).days in (6, 7)
    assert too_long.status_code == 400
    assert too_long.json()["field"] == "days"
    assert "1 to 90 days" in too_long.json()["detail"]


def test_a_token_cannot_make_another_token(django_user_model: Any) -> None:
    _, key = api_token_create(django_user_model.objects.create_user("ada"), name="ci")

    response = with_token(key).post("/api/v1/tokens/", {"name": "forever"}, format="json")

    assert response.status_code == 403
    assert ApiToken.objects.count() == 1


def test_owners_list_and_revoke_their_own_tokens_only(django_user_model: Any) -> None:
    ada, bob = (django_user_model.objects.create_user(name) for name in ("ada", "bob"))
    own, _ = api_token_create(ada, name="ada's")
    other, other_key = api_token_create(bob, name="bob's")
    client = signed_in(ada)

    listed = client.get("/api/v1/tokens/").json()["results"]
    foreign = client.delete(f"/api/v1/tokens/{other.pk}/")
    missing = client.delete("/api/v1/tokens/999999/")
    revoked = client.delete(f"/api/v1/tokens/{own.pk}/")

    assert [row["name"] for row in listed] == ["ada's"]
    assert (foreign.status_code, missing.status_code) == (404, 404)
    assert foreign.json()["detail"] == missing.json()["detail"]
    assert revoked.status_code == 204
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["bob's"]
    assert with_token(other_key).get("/api/v1/tokens/").status_code == 200


def test_an_administrator_lists_and_revokes_everyones_tokens_in_the_api_and_the_admin(
    django_user_model: Any,
) -> None:
    ada = django_user_model.objects.create_user("ada")
    first, key = api_token_create(ada, name="ci")
    second, _ = api_token_create(ada, name="laptop")
    admin = django_user_model.objects.create_user("security", is_staff=True)
    admin.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_apitoken", "delete_apitoken"], content_type__app_label="access")
    )
    client = signed_in(admin)

    listed = client.get("/api/v1/tokens/?user=ada").json()["results"]
    admin_page = client.get("/admin/access/apitoken/")
    revoked = client.delete(f"/api/v1/tokens/{first.pk}/")
    in_admin = client.post(f"/admin/access/apitoken/{second.pk}/delete/", {"post": "yes"})

    assert sorted(row["name"] for row in listed) == ["ci", "laptop"]
    assert admin_page.status_code == 200
    assert first.prefix in admin_page.content.decode()
    assert key not in admin_page.content.decode()
    assert (revoked.status_code, in_admin.status_code) == (204, 302)
    assert not ApiToken.objects.exists()
    assert with_token(key).get("/api/v1/tokens/").status_code == 401


def test_the_command_makes_lists_and_revokes_tokens(django_user_model: Any) -> None:
    django_user_model.objects.create_user("ci")
    out = StringIO()

    call_command("api_token", "ci", "--name", "pipeline", "--days", "10", stdout=out)
    key = out.getvalue().split()[2]
    call_command("api_token", "--list", stdout=out)
    token = ApiToken.objects.get()
    call_command("api_token", "--revoke", str(token.pk), stdout=out)

    assert key.startswith("omc_")
    assert "pipeline" in out.getvalue()
    assert "never used" in out.getvalue()
    assert not ApiToken.objects.exists()
