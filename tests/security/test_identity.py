"""Identity: OIDC users are found by `sub`, keep their name and groups (which grants to groups
and the audit log use), never take over a local account; roles are managed by a command."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.apps import apps as django_apps
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import Group
from django.contrib.sessions.middleware import SessionMiddleware
from django.core.management import CommandError, call_command
from django.http import HttpResponse
from django.test import RequestFactory

from access.identity import check_prefixes
from access.models import Delegation, Grant, Identity, Role
from access.oidc import FreshOidcSession, OidcBackend
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
    user = OidcBackend().create_user(CLAIMS)
    Grant.objects.create(group="oidc:ml-platform", cluster="prod", namespace="team-a", role=Role.PATCHER)

    scope = scope_for_user(user)

    assert scope.may_patch("prod", "team-a")
    assert not scope.may_patch("prod", "")
    assert not scope.reads("prod", "team-b")
    assert scope.reads("prod", "")
    assert (scope.actor.kube_user, scope.actor.kube_groups, scope.actor.oidc) == (
        "oidc:ada",
        ("oidc:ml-platform",),
        True,
    )


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


@pytest.mark.parametrize(
    ("values", "problem"),
    [
        ({"OME_KUBE_USER_PREFIX": ""}, "OME_KUBE_USER_PREFIX must not be empty or start with 'system:'"),
        ({"OME_KUBE_GROUP_PREFIX": "system:oidc:"}, "OME_KUBE_GROUP_PREFIX must not be empty"),
        ({"OME_KUBE_LOCAL_USER_PREFIX": "oidc:"}, "OME_KUBE_USER_PREFIX and OME_KUBE_LOCAL_USER_PREFIX must differ"),
        (
            {"OME_KUBE_LOCAL_GROUP_PREFIX": "oidc:x:"},
            "OME_KUBE_GROUP_PREFIX and OME_KUBE_LOCAL_GROUP_PREFIX must differ",
        ),
    ],
)
def test_prefixes_that_could_send_a_system_name_or_mix_local_and_oidc_users_fail_the_checks(
    settings: Any, values: dict[str, str], problem: str
) -> None:
    for name, value in values.items():
        setattr(settings, name, value)

    found = [message.msg for message in check_prefixes()]

    assert any(problem in message for message in found), found


def test_the_default_prefixes_pass_the_checks() -> None:
    assert check_prefixes() == []


def test_the_impersonation_role_lists_exactly_the_prefixed_names_the_dashboard_sends(
    django_user_model: Any, settings: Any
) -> None:
    local = django_user_model.objects.create_user("bob")
    local.groups.add(Group.objects.create(name="sre"))
    Identity.objects.create(
        user=django_user_model.objects.create_user("ada.1"), subject="s", name="system:admin", groups=["system:masters"]
    )
    Identity.objects.create(user=django_user_model.objects.create_user("odd"), subject="t", name="eve\r\nx")
    out = StringIO()

    call_command("delegation_rbac", stdout=out)

    role = yaml.safe_load(out.getvalue())
    names = {rule["resources"][0]: rule["resourceNames"] for rule in role["rules"]}
    assert role["metadata"]["name"] == "ome-compat-impersonate"
    assert names == {
        "users": ["oidc:system:admin", "ome-compat:bob"],
        "groups": ["oidc:system:masters", "ome-compat:sre"],
    }
    assert all(rule["verbs"] == ["impersonate"] for rule in role["rules"])


def test_no_role_in_deploy_may_impersonate_any_name() -> None:
    # An impersonate rule without resourceNames lets the dashboard act as anyone, system:masters too.
    # The Helm chart's templates are not YAML until rendered; tests/ops/test_chart.py shows that
    # their renders equal these manifests object for object.
    deploy = Path(settings.BASE_DIR) / "deploy"
    rules = [
        rule
        for path in deploy.rglob("*.yaml")
        if not path.is_relative_to(deploy / "chart" / "templates")
        for document in yaml.safe_load_all(path.read_text())
        if document and document.get("kind") in {"ClusterRole", "Role"}
        for rule in document.get("rules") or []
    ]

    assert rules
    assert all(rule.get("resourceNames") for rule in rules if "impersonate" in rule.get("verbs", [])), rules


# ---- fresh groups ---------------------------------------------------------------------------


def oidc_request(method: str, user: Any, *, expires_in: float, backend: str = "access.oidc.OidcBackend") -> Any:
    """A request of `user` signed in through `backend`, whose sign-in is good for `expires_in` s."""
    request = getattr(RequestFactory(), method)("/matrix/")
    SessionMiddleware(lambda request: HttpResponse()).process_request(request)
    request.session[BACKEND_SESSION_KEY] = backend
    request.session[SESSION_KEY] = str(user.pk)
    request.session["oidc_id_token_expiration"] = time.time() + expires_in
    request.user = user
    return request


@pytest.fixture
def fresh_sessions(settings: Any) -> FreshOidcSession:
    settings.ROOT_URLCONF = "tests.security.oidc_urls"
    return FreshOidcSession(lambda request: HttpResponse())


def test_an_expired_oidc_sign_in_is_renewed_at_the_identity_provider_on_the_next_page(
    fresh_sessions: FreshOidcSession,
) -> None:
    user = OidcBackend().create_user(CLAIMS)

    fresh = fresh_sessions.process_request(oidc_request("get", user, expires_in=60))
    renewed = fresh_sessions.process_request(oidc_request("get", user, expires_in=-1))

    assert fresh is None
    assert renewed is not None
    assert renewed.status_code == 302
    assert renewed["Location"].startswith("https://idp.example/authorize?")
    assert "prompt=none" in renewed["Location"]


def test_a_change_from_an_expired_oidc_sign_in_is_made_signed_out(fresh_sessions: FreshOidcSession) -> None:
    user = OidcBackend().create_user(CLAIMS)
    expired = oidc_request("post", user, expires_in=-1)
    current = oidc_request("post", user, expires_in=60)
    local = oidc_request("post", user, expires_in=-1, backend="django.contrib.auth.backends.ModelBackend")

    for request in (expired, current, local):
        assert fresh_sessions.process_request(request) is None

    assert not expired.user.is_authenticated
    assert current.user.is_authenticated
    assert local.user.is_authenticated


def test_renewed_groups_replace_the_old_ones_for_grants() -> None:
    user = OidcBackend().create_user(CLAIMS)
    Grant.objects.create(group="oidc:ml-platform", cluster="prod", role=Role.PATCHER)
    before = scope_for_user(user)

    OidcBackend().update_user(user, {**CLAIMS, "groups": ["oncall"]})

    assert before.may_patch("prod", "team-a")
    assert not scope_for_user(user).reads_cluster("prod")


def test_sessions_last_a_working_day_not_two_weeks() -> None:
    assert settings.SESSION_COOKIE_AGE == 8 * 3600


def test_with_oidc_configured_the_sign_in_is_renewed_by_the_middleware_after_authentication() -> None:
    show = (
        "import json; from ome_dashboard import settings as s; "
        "print(json.dumps([s.MIDDLEWARE, s.OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS]))"
    )
    env = {
        "PATH": os.environ["PATH"],
        "DEBUG": "true",
        "OIDC_RP_CLIENT_ID": "ome-compat",
        "OIDC_OP_AUTHORIZATION_ENDPOINT": "https://idp.example/authorize",
        "OIDC_OP_TOKEN_ENDPOINT": "https://idp.example/token",
        "OIDC_OP_USER_ENDPOINT": "https://idp.example/userinfo",
    }

    result = subprocess.run(
        [sys.executable, "-c", show], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=60
    )

    assert result.returncode == 0, result.stderr
    middleware, renew = json.loads(result.stdout)
    authentication = middleware.index("django.contrib.auth.middleware.AuthenticationMiddleware")
    assert middleware[authentication + 1] == "access.oidc.FreshOidcSession"
    assert renew == 900


def test_django_and_oidc_groups_of_one_name_do_not_share_grants(django_user_model: Any) -> None:
    """Issue 32: a grant to the Django group `ml-platform` applied to anyone whose OIDC token
    claimed a group of that name (and the reverse). Now an OIDC group's grant is `oidc:NAME`."""
    oidc_user = OidcBackend().create_user(CLAIMS)  # OIDC group ml-platform
    local = django_user_model.objects.create_user("bob")
    local.groups.add(Group.objects.create(name="ml-platform"))
    Grant.objects.create(group="ml-platform", cluster="prod", role=Role.PATCHER)  # the Django group
    Grant.objects.create(group="oidc:ml-platform", cluster="lab", role=Role.VIEWER)  # the OIDC group

    oidc_scope, local_scope = scope_for_user(oidc_user), scope_for_user(local)

    assert not oidc_scope.reads_cluster("prod")
    assert oidc_scope.reads_cluster("lab")
    assert local_scope.may_patch("prod", "team-a")
    assert not local_scope.reads_cluster("lab")


def test_a_django_group_named_with_the_oidc_prefix_gets_no_oidc_grant(django_user_model: Any) -> None:
    local = django_user_model.objects.create_user("mallory")
    local.groups.add(Group.objects.create(name="oidc:ml-platform"))
    Grant.objects.create(group="oidc:ml-platform", cluster="lab", role=Role.VIEWER)

    assert not scope_for_user(local).reads_cluster("lab")


def test_the_migration_gives_existing_oidc_group_grants_their_prefix() -> None:
    """An existing grant named like a Django group stays that group's; any other was for an
    OIDC group (nothing else could match it) and gets `oidc:`."""
    migration = importlib.import_module("access.migrations.0004_oidc_group_grants")
    Group.objects.create(name="sre")
    Grant.objects.create(group="sre", cluster="prod", role=Role.ADMIN)
    Grant.objects.create(group="ml-platform", cluster="prod", role=Role.VIEWER)
    Grant.objects.create(group="oidc:oncall", cluster="prod", role=Role.VIEWER)

    migration.split_group_namespaces(django_apps, None)

    assert sorted(Grant.objects.values_list("group", flat=True)) == ["oidc:ml-platform", "oidc:oncall", "sre"]
    migration.join_group_namespaces(django_apps, None)
    assert sorted(Grant.objects.values_list("group", flat=True)) == ["ml-platform", "oncall", "sre"]
