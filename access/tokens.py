"""API tokens that expire: made (the key shown once, its SHA-256 stored), checked on every API
request (`Authorization: Token <key>`), their last use recorded, listed and revoked by their
owner and by an administrator (`access.view_apitoken` / `access.delete_apitoken`)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from core.errors import DomainError

from .models import ApiToken

KEY_PREFIX = "omc_"
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
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_PRECISION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
            token.last_used_at = now
        return token.user, token
