"""Single sign-on with OpenID Connect (mozilla-django-oidc), when settings.OIDC_ENABLED.

A user is found by the token's `sub` (never by e-mail or name, which an identity provider may
let users change), created at the first sign-in, and their Identity (the username and groups
claims) refreshed at every sign-in: grants to those groups apply, delegating clusters see that
name and those groups, and the audit log shows them. FreshOidcSession signs them in again every
OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS, so groups removed at the identity provider stop counting.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from django.conf import settings
from django.contrib import auth
from django.contrib.auth import BACKEND_SESSION_KEY, get_user_model
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.module_loading import import_string
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.middleware import SessionRefresh

from .models import Identity


def identity_from_claims(user: Any, claims: dict[str, Any]) -> Identity:
    """Store the claims the dashboard authorizes with; groups that are not strings are dropped."""
    groups = claims.get(settings.OIDC_GROUPS_CLAIM) or []
    identity, _ = Identity.objects.update_or_create(
        user=user,
        defaults={
            "subject": str(claims.get("sub") or ""),
            "name": str(claims.get(settings.OIDC_USERNAME_CLAIM) or claims.get("sub") or "")[:255],
            "groups": [group for group in groups if isinstance(group, str)] if isinstance(groups, list) else [],
            "groups_read_at": timezone.now(),
        },
    )
    return identity


class OidcBackend(OIDCAuthenticationBackend):
    def filter_users_by_claims(self, claims: dict[str, Any]) -> QuerySet[Any]:
        subject = str(claims.get("sub") or "")
        users = get_user_model().objects
        return users.filter(access_identity__subject=subject) if subject else users.none()

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        return bool(claims.get("sub"))

    def create_user(self, claims: dict[str, Any]) -> Any:
        users = get_user_model().objects
        name = str(claims.get(settings.OIDC_USERNAME_CLAIM) or claims["sub"])[:100]
        if users.filter(username=name).exists():
            # Never take over a local account of the same name.
            name = f"{name}.{hashlib.sha256(str(claims['sub']).encode()).hexdigest()[:8]}"
        user = users.create_user(username=name, email=str(claims.get("email") or ""))
        identity_from_claims(user, claims)
        return user

    def update_user(self, user: Any, claims: dict[str, Any]) -> Any:
        identity_from_claims(user, claims)
        return user


class FreshOidcSession(SessionRefresh):
    """Middleware: an OIDC sign-in is good for OIDC_RENEW_ID_TOKEN_EXPIRY_SECONDS. After that, a
    page load (GET) goes through the identity provider again without a prompt (mozilla-django-
    oidc's SessionRefresh), which refreshes the name and groups or, if the provider says no,
    signs the user out; any other request (a POST, a DELETE) is signed out at once, so groups
    the provider has since removed never authorize a change."""

    def process_request(self, request: HttpRequest) -> HttpResponse | None:
        if request.method != "GET" and _oidc_sign_in_expired(request):
            auth.logout(request)
            return None
        return super().process_request(request)


def _oidc_sign_in_expired(request: HttpRequest) -> bool:
    backend = request.session.get(BACKEND_SESSION_KEY)
    return bool(
        request.user.is_authenticated
        and backend
        and issubclass(import_string(backend), OIDCAuthenticationBackend)
        and request.session.get("oidc_id_token_expiration", 0) <= time.time()
    )
