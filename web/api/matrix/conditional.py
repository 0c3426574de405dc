"""Conditional GETs and cached pages for the matrix API.

A page of cells depends only on the build it reads (the build's generation changes with every
incremental update), the query, who asks (what they may read), the format and the OME behaviour
the verdicts follow. So each page gets an ETag made of those: a client that sends it back in
If-None-Match gets a 304 without the page being made, and a page made once is kept per process
for as long as its build generation is current (core.cache.VersionedCache: a newer generation
replaces it, nothing is invalidated by hand). Both are answered from the current build of the
cluster the query names, read with its cluster in one query (two for the default, the only
cluster), before the query is parsed: only a query that was answered with a page before can
have an ETag or a cached page.
"""

from __future__ import annotations

import hashlib
from typing import Any

from django.utils.http import parse_etags
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

import matching
from access.current import scope_of
from core.cache import VersionedCache
from core.errors import DomainError
from inventory.selectors import cluster_choose
from matrix.freshness import Freshness
from matrix.models import MatrixBuild
from matrix.selectors import current_build, current_build_named

# Owner: (cluster id, page key); version: the build's generation. About 75 KB a page of 50 cells.
_PAGES: VersionedCache[tuple[object, ...], dict[str, Any]] = VersionedCache("cell_pages")


def page_key(request: Request) -> str:
    """What a page depends on besides its build: who asks, in which format, the whole URL
    (query and host: the page links to the next one), and the OME behaviour."""
    user = request.user.pk if request.user.is_authenticated else "anonymous"
    # The reader's rights, not only who they are: a grant or revocation must not serve old pages.
    rights = scope_of(request).fingerprint()
    media = request.accepted_renderer.media_type if getattr(request, "accepted_renderer", None) else ""
    parts = (matching.OME_BEHAVIOUR["commit"], user, rights, media, request.build_absolute_uri())
    return hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()


def page_etag(build: MatrixBuild, key: str, freshness: Freshness) -> str:
    """A strong ETag for the page `key` of this build generation, as fresh as `freshness` says
    (the envelope says it: a page must not be held once its cluster went stale)."""
    generation = hashlib.blake2b(repr((build.generation, freshness.identity())).encode(), digest_size=8).hexdigest()
    return f'"{build.pk}-{generation}-{key}"'


def requested_build(request: Request) -> MatrixBuild | None:
    """The current build of the cluster the query names (or of the only cluster); None when
    that is not plain (no such cluster, no matrix): the full path then answers with the error."""
    if name := request.query_params.get("cluster"):
        return current_build_named(name, scope=scope_of(request))
    try:
        return current_build(cluster_choose(None, default="only", scope=scope_of(request)))
    except DomainError:
        return None


def held_page(request: Request, build: MatrixBuild, key: str, freshness: Freshness) -> Response | None:
    """A 304 when the client holds the page, the cached page (showing `freshness`, the
    cluster's now) when this process has it, else None."""
    etag = page_etag(build, key, freshness)
    given = request.headers.get("If-None-Match")
    if given and etag in (tag.removeprefix("W/") for tag in parse_etags(given)):
        return _with_validators(Response(status=status.HTTP_304_NOT_MODIFIED), etag)
    data = _PAGES.peek((build.cluster_id, key), build.generation)
    if data is None:
        return None
    return _with_validators(Response({**data, "freshness": freshness.to_dict()}), etag)


def made_page(build: MatrixBuild, key: str, data: dict[str, Any], freshness: Freshness) -> Response:
    """A page just made from `build` (its envelope showing `freshness`): kept for the next
    request, sent with its ETag."""
    _PAGES.get((build.cluster_id, key), build.generation, lambda _stale: data)
    return _with_validators(Response(data), page_etag(build, key, freshness))


def _with_validators(response: Response, etag: str) -> Response:
    # private: a page depends on who asks; no-cache: reuse only after revalidating, which is cheap.
    response["ETag"] = etag
    response["Cache-Control"] = "private, no-cache"
    return response
