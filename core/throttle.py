"""The API's throttles (DRF ScopedRateThrottle, settings REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"])
for HTML views that do the same expensive work: one rate per scope whichever door is used."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse
from rest_framework.throttling import ScopedRateThrottle

View = TypeVar("View", bound=Callable[..., HttpResponse])


class _Scoped:
    """What ScopedRateThrottle reads from a view: its scope."""

    def __init__(self, scope: str) -> None:
        self.throttle_scope = scope


def throttled(scope: str, *, methods: tuple[str, ...] = ("POST",)) -> Callable[[View], View]:
    """Answer 429 once the user (or address) has made more `methods` requests of `scope` than
    its rate allows, counted with the API's requests of the same scope."""

    def decorate(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            throttle = ScopedRateThrottle()
            if request.method in methods and not throttle.allow_request(request, _Scoped(scope)):  # type: ignore[arg-type]
                wait = throttle.wait()
                response = HttpResponse(
                    f"Too many requests: try again in {int(wait or 1)} s.\n", status=429, content_type="text/plain"
                )
                response["Retry-After"] = str(int(wait or 1))
                return response
            return view(request, *args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return decorate
