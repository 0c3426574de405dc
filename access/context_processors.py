"""What every page may say about sign-in: whether anonymous reads are on, whether SSO is, and
whether this is a local copy (DEBUG, as `make run` serves it) with its demo administrator."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def access(request: HttpRequest) -> dict[str, bool]:
    return {
        "anonymous_read": bool(settings.API_ANONYMOUS_READ),
        "oidc_enabled": bool(settings.OIDC_ENABLED),
        "local_copy": bool(settings.DEBUG),
    }
