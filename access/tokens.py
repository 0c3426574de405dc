"""API tokens that expire: made (the key shown once, its SHA-256 stored), checked on every API
request (`Authorization: Token <key>`), their last use recorded, listed and revoked by their
owner and by an administrator (`access.view_apitoken` / `access.delete_apitoken`)."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from core.errors import DomainError

from .models import ApiToken, Identity

KEY_PREFIX = "omc_"
# The answer's header that says why a token acts without its OIDC user's groups.
GROUPS_NOTICE_HEADER = "OME-Token-Groups"
# The attribute that marks the user of a request as authenticated by this token (token_of).
TOKEN_ATTRIBUTE = "api_token"
# Recording every use would write a row per request; a minute is precise enough to audit.
LAST_USED_PRECISION = timedelta(minutes=1)


class TokenLifetimeInvalid(DomainError):
    code = "bad_lifetime"


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def api_token_create(user: Any, *, name: str, days: int | None = None) -> tuple[ApiToken, str]:
    """A new token of `user` valid for `days` (default OME_API_TOKEN_DAYS, at most
    OME_API_TOKEN_MAX_DAYS), and its key, which is not kept anywhere."""
    days = int(settings.OME_API_TOKEN_DAYS) if days is None else days
    longest = int(settings.OME_API_TOKEN_MAX_DAYS)
    if not 1 <= days <= longest:
        raise TokenLifetimeInvalid(f"A token lives 1 to {longest} days (OME_API_TOKEN_MAX_DAYS).", field="days")
    key = KEY_PREFIX + secrets.token_hex(24)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        digest=_digest(key),
        prefix=key[: len(KEY_PREFIX) + 6],
        expires_at=timezone.now() + timedelta(days=days),
    )
    return token, key


def api_token_list(reader: Any) -> QuerySet[ApiToken]:
    """The tokens `reader` may see: their own, or every one for an administrator."""
    tokens = ApiToken.objects.select_related("user")
    return tokens if reader.has_perm("access.view_apitoken") else tokens.filter(user=reader)


def api_token_revocable(reader: Any) -> QuerySet[ApiToken]:
    """The tokens `reader` may revoke: their own, or every one for an administrator."""
    if reader.has_perm("access.delete_apitoken"):
        return ApiToken.objects.all()
    return ApiToken.objects.filter(user=reader)


class ApiTokenAuthentication(TokenAuthentication):
    """DRF's `Authorization: Token <key>` scheme over ApiToken: unknown, expired and inactive
    users' tokens are refused (401) with a reason."""

    def authenticate_credentials(self, key: str) -> tuple[Any, ApiToken]:
        token = ApiToken.objects.select_related("user").filter(digest=_digest(key)).first()
        if token is None:
            raise AuthenticationFailed("Invalid token.")
        now = timezone.now()
        if token.expires_at <= now:
            raise AuthenticationFailed(
                f"Token {token.prefix}… expired at {token.expires_at:%Y-%m-%d %H:%M} UTC: make a new one."
            )
        if not token.user.is_active:
            raise AuthenticationFailed("User inactive or deleted.")
        # The user of this request is authenticated by the token, not a sign-in: every scope
        # made of it (access.scope.scope_for_user) applies oidc_groups_unread.
        setattr(token.user, TOKEN_ATTRIBUTE, token)
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_PRECISION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
            token.last_used_at = now
        return token.user, token


def token_of(user: Any) -> ApiToken | None:
    """The API token that authenticated `user` for this request, if one did."""
    return getattr(user, TOKEN_ATTRIBUTE, None)


def oidc_groups_unread(user: Any, identity: Identity | None) -> str:
    """Why the OIDC groups of `user` do not count for this request, or "" when they do (or there
    are none). A token is never renewed at the identity provider, so through a token they count
    only while a sign-in read them at most OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS ago; sessions
    re-read them themselves (access.oidc.FreshOidcSession)."""
    if token_of(user) is None or identity is None or not identity.groups:
        return ""
    hours = int(settings.OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS)
    read = identity.groups_read_at
    if read is not None and timezone.now() - read <= timedelta(hours=hours):
        return ""
    when = f"at {read:%Y-%m-%d %H:%M} UTC" if read is not None else "at an unrecorded time"
    # ASCII only (a header): no user or group names.
    return (
        f"OIDC groups last read at a sign-in {when}, more than {hours} h ago "
        "(OME_API_TOKEN_OIDC_GROUPS_MAX_AGE_HOURS): grants through them do not apply to this token "
        "until its owner signs in again"
    )


class TokenGroupsNoticeMiddleware:
    """Adds GROUPS_NOTICE_HEADER to the answers of a token whose OIDC groups do not count
    (DRF puts the token's user, marked by ApiTokenAuthentication, on the request)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if token_of(user) is not None:
            notice = oidc_groups_unread(user, Identity.objects.filter(user=user).first())
            if notice:
                response[GROUPS_NOTICE_HEADER] = notice
        return response


class BearerApiTokenAuthentication(ApiTokenAuthentication):
    """The same tokens sent as `Authorization: Bearer <key>`, which is what a kubeconfig's
    `token` sends: the API server calls the admission webhook with one (docs/admission.md)."""

    keyword = "Bearer"
