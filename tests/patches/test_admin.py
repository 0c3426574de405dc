"""The audit log in the admin: readable, never editable, not even by a superuser."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from inventory.models import Cluster, Resource
from patches.models import PatchAttempt
from patches.services import patch_apply, version_of
from tests.patches.seed import MODEL, SEED_PATCH

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.patches.urls")]


@pytest.fixture
def attempt(snapshot: Cluster, applier: Any) -> PatchAttempt:
    version = version_of(snapshot, Resource.objects.get(cluster=snapshot, name="qwen-image-pvc"))
    return patch_apply(snapshot, model=MODEL, patch=SEED_PATCH, resource_version=version, user=applier).attempt


@pytest.fixture
def superuser_client(django_user_model: Any) -> Client:
    user = django_user_model.objects.create_superuser("root", email="root@example.com", password=None)
    client = Client()
    client.force_login(user)
    return client


def test_the_only_permission_is_view_since_applying_needs_a_role() -> None:
    codenames = set(Permission.objects.filter(content_type__app_label="patches").values_list("codename", flat=True))

    assert codenames == {"view_patchattempt"}


def test_the_admin_grants_nobody_add_change_or_delete(rf: Any, django_user_model: Any) -> None:
    request = rf.get("/")
    request.user = django_user_model(username="root", is_superuser=True, is_staff=True, is_active=True)
    model_admin = admin.site._registry[PatchAttempt]

    assert model_admin.has_view_permission(request)
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)


def test_a_superuser_can_read_the_audit_log_in_the_admin(attempt: PatchAttempt, superuser_client: Client) -> None:
    listing = superuser_client.get(reverse("admin:patches_patchattempt_changelist"))
    page = superuser_client.get(reverse("admin:patches_patchattempt_change", args=[attempt.pk]))

    assert listing.status_code == 200
    assert b"qwen-image-pvc" in listing.content
    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert b"delete_selected" not in listing.content


def test_a_superuser_cannot_change_add_or_delete_in_the_admin(attempt: PatchAttempt, superuser_client: Client) -> None:
    change = reverse("admin:patches_patchattempt_change", args=[attempt.pk])

    edited = superuser_client.post(change, {"result": "denied", "detail": "edited"})
    deleted = superuser_client.post(reverse("admin:patches_patchattempt_delete", args=[attempt.pk]), {"post": "yes"})
    added = superuser_client.get(reverse("admin:patches_patchattempt_add"))

    assert (edited.status_code, deleted.status_code, added.status_code) == (403, 403, 403)
    attempt_now = PatchAttempt.objects.get()
    assert (attempt_now.result, attempt_now.detail) == ("applied", attempt.detail)
