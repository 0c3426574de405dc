"""The scope of the request being served, for selectors and services called without one.

`ScopeMiddleware` remembers the request; `current_scope()` computes its user's Scope at the
first call (after DRF has authenticated a token, whose user DRF puts on the request) and keeps
it for the rest of the request. Outside a request (Celery tasks, management commands) the
caller is the system itself and reads everything. A streamed response (the exports) keeps the
request's scope while it streams.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from .scope import SYSTEM, Scope, scope_for_user

_REQUEST: ContextVar[HttpRequest | None] = ContextVar("access_request", default=None)


def scope_of(request: HttpRequest) -> Scope:
    """The Scope of the request's user, computed once per request and user."""
    user = getattr(request, "user", None)
    key = (getattr(user, "pk", None), bool(user is not None and user.is_authenticated))
    cached: tuple[object, Scope] | None = getattr(request, "_access_scope", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    scope = scope_for_user(user)
    request._access_scope = (key, scope)  # type: ignore[attr-defined]
    return scope


def current_scope(scope: Scope | None = None) -> Scope:
    """`scope` when given; else the current request's; else (no request) SYSTEM."""
    if scope is not None:
        return scope
    request = _REQUEST.get()
    return SYSTEM if request is None else scope_of(request)


def _streamed(content: Iterable[Any], request: HttpRequest) -> Iterator[Any]:
    previous = _REQUEST.get()
    _REQUEST.set(request)
    try:
        yield from content
    finally:
        _REQUEST.set(previous)


class ScopeMiddleware:
    """Makes the request's scope the current one while it is served (and streamed)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = _REQUEST.set(request)
        try:
            response = self.get_response(request)
        finally:
            _REQUEST.reset(token)
        if isinstance(response, StreamingHttpResponse):
            response.streaming_content = _streamed(response.streaming_content, request)
        return response
