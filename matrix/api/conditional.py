"""Conditional GETs and cached pages for the matrix API.

A page of cells depends only on the build it reads (its id and generation: an incremental
update bumps the generation), the query, who asks (what they may read) and the OME behaviour
the verdicts follow. So each page gets an ETag made of those; a client that sends it back in
If-None-Match gets a 304 without the page being made, and a page made once is kept per process
for as long as its build generation is current (core.cache.VersionedCache: a newer generation
replaces it, nothing is invalidated by hand).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from django.utils.http import parse_etags
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

import matching
from core.cache import VersionedCache

from ..models import MatrixBuild

# Owner: (cluster id, page key); version: the build's generation. About 75 KB a page of 50 cells.
_PAGES: VersionedCache[tuple[object, ...], dict[str, Any]] = VersionedCache(owners=256)


def page_key(request: Request) -> str:
    """What a page depends on besides its build: who asks, in which format, the whole URL
    (query and host: the page links to the next one), and the OME behaviour."""
    user = request.user.pk if request.user.is_authenticated else "anonymous"
    media = request.accepted_renderer.media_type if getattr(request, "accepted_renderer", None) else ""
    parts = (matching.OME_BEHAVIOUR["commit"], user, media, request.build_absolute_uri())
    return hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()


def page_etag(build: MatrixBuild, key: str) -> str:
    """A strong ETag for the page `key` of this build generation."""
    generation = hashlib.blake2b(repr(build.generation).encode(), digest_size=8).hexdigest()
    return f'"{build.pk}-{generation}-{key}"'


def not_modified(request: Request, etag: str) -> Response | None:
    """A 304 when the client already holds this page (If-None-Match names its ETag, or `*`)."""
    given = request.headers.get("If-None-Match")
    if not given:
        return None
    tags = parse_etags(given)
    if "*" in tags or etag in tags or etag in (tag.removeprefix("W/") for tag in tags):
        return Response(status=status.HTTP_304_NOT_MODIFIED)
    return None


def cached_page(build: MatrixBuild, key: str, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The page's data, made once per build generation and process."""
    return _PAGES.get((build.cluster_id, key), build.generation, lambda _stale: make())


def conditional_page(request: Request, build: MatrixBuild, make: Callable[[], dict[str, Any]]) -> Response:
    """The page as a response with its ETag (304 when the client holds it). `private, no-cache`:
    a page depends on who asks, and a client must revalidate, cheaply, before reusing it."""
    key = page_key(request)
    etag = page_etag(build, key)
    response = not_modified(request, etag) or Response(cached_page(build, key, make))
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    return response
