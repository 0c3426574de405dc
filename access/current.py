"""The scope of the reader a request is served for: views and API endpoints take it from here
once and hand it, explicitly, to every selector and service they call (there is no implicit
per-request scope: a read that is not given a scope cannot be written)."""

from __future__ import annotations

from django.http import HttpRequest
from rest_framework.request import Request

from .scope import Scope, scope_for_user


def scope_of(request: HttpRequest | Request) -> Scope:
    """The Scope of the request's user, computed once per request and user (after DRF has
    authenticated a token, whose user DRF puts on the request)."""
    user = getattr(request, "user", None)
    key = (getattr(user, "pk", None), bool(user is not None and user.is_authenticated))
    cached: tuple[object, Scope] | None = getattr(request, "_access_scope", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    scope = scope_for_user(user)
    request._access_scope = (key, scope)  # type: ignore[union-attr]
    return scope
