"""Identity: OIDC users are found by `sub`, keep their name and groups (which grants to groups
and the audit log use), never take over a local account; roles are managed by a command."""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from access.models import Delegation, Grant, Identity, Role
from access.oidc import OidcBackend
from access.scope import scope_for_user

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def oidc(settings: Any) -> None:
    """SSO configured as OIDC_* environment variables would (the endpoints are never called here)."""
    settings.OIDC_RP_CLIENT_ID, settings.OIDC_RP_CLIENT_SECRET = "ome-compat", "client-secret"
    settings.OIDC_OP_TOKEN_ENDPOINT = "https://idp.example/token"
    settings.OIDC_OP_USER_ENDPOINT = "https://idp.example/userinfo"
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = "https://idp.example/authorize"
    settings.OIDC_RP_SIGN_ALGO = "HS256"


CLAIMS = {"sub": "00u-ada", "preferred_username": "ada", "email": "ada@corp.example", "groups": ["ml-platform", 7]}


def test_an_oidc_user_is_created_with_name_and_groups_and_found_again_by_sub() -> None:
    backend = OidcBackend()

    user = backend.create_user(CLAIMS)
    again = backend.filter_users_by_claims({**CLAIMS, "preferred_username": "renamed"})
    backend.update_user(user, {**CLAIMS, "groups": ["ml-platform", "oncall"]})

    assert list(again) == [user]
    identity = Identity.objects.get(user=user)
    assert (identity.subject, identity.name, identity.groups) == ("00u-ada", "ada", ["ml-platform", "oncall"])


def test_an_oidc_user_never_takes_over_a_local_account_of_the_same_name(django_user_model: Any) -> None:
    local = django_user_model.objects.create_user("ada")

    created = OidcBackend().create_user(CLAIMS)

    assert created.pk != local.pk
    assert created.username.startswith("ada.")
    assert not OidcBackend().filter_users_by_claims({"sub": ""}).exists()


def test_grants_to_an_oidc_group_apply_and_the_cluster_sees_the_oidc_name(settings: Any) -> None:
    settings.OME_KUBE_USER_PREFIX = "oidc:"
    user = OidcBackend().create_user(CLAIMS)
    Grant.objects.create(group="ml-platform", cluster="prod", namespace="team-a", role=Role.PATCHER)

    scope = scope_for_user(user)

    assert scope.may_patch("prod", "team-a")
    assert not scope.may_patch("prod", "")
    assert not scope.reads("prod", "team-b")
    assert scope.reads("prod", "")
    assert (scope.actor.kube_user, scope.actor.kube_groups, scope.actor.oidc) == ("oidc:ada", ("ml-platform",), True)


def test_roles_are_granted_revoked_listed_and_delegation_set_by_command(django_user_model: Any) -> None:
    django_user_model.objects.create_user("bob")
    out = StringIO()

    call_command("access_grant", "viewer", "--user", "bob", "--cluster", "prod", "--namespace", "team-a", stdout=out)
    call_command("access_grant", "admin", "--group", "sre", "--cluster", "*", stdout=out)
    call_command("access_grant", "--delegate", "prod", stdout=out)
    call_command("access_grant", "--list", stdout=out)
    call_command(
        "access_grant", "viewer", "--user", "bob", "--cluster", "prod", "--namespace", "team-a", "--revoke", stdout=out
    )

    assert "user bob: viewer on prod/team-a" in out.getvalue()
    assert "group sre: admin on cluster *" in out.getvalue()
    assert list(Grant.objects.values_list("group", "role")) == [("sre", Role.ADMIN)]
    assert Delegation.objects.filter(cluster="prod").exists()
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("access_grant", "viewer", "--user", "nobody", "--cluster", "prod")


def test_an_inactive_user_holds_nothing_and_a_superuser_everything(django_user_model: Any) -> None:
    gone = django_user_model.objects.create_user("gone", is_active=False)
    Grant.objects.create(user=gone, cluster="*", role=Role.ADMIN)
    root = django_user_model.objects.create_superuser("root")

    assert not scope_for_user(gone).reads("prod", "")
    assert scope_for_user(root).may_admin("prod")
