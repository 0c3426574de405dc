"""Exports stream through the whole middleware stack: compressed chunk by chunk (Django's
GZipMiddleware compresses a streamed answer as it goes), no validator middleware reads them to
make an ETag, and the serving process holds a bounded part of the file, never all of it."""

from __future__ import annotations

import gzip
import tracemalloc
from typing import Any

import pytest
from rest_framework.test import APIClient

from inventory.models import Cluster

pytestmark = pytest.mark.django_db

EXPORTS = [
    ("export.csv", {"reasons": "true"}),
    ("export.json", {"reasons": "true"}),
    ("export.json", {"namespace": "team-a", "status": "excluded"}),
]


def export(api: APIClient, path: str, params: dict[str, Any], **headers: str) -> Any:
    return api.get(f"/api/v1/matrix/cells/{path}", params, **headers)


@pytest.mark.parametrize(("path", "params"), EXPORTS)
def test_a_gzipped_export_streams_compressed_chunks_without_an_etag(
    api: APIClient, demo: Cluster, path: str, params: dict[str, Any]
) -> None:
    plain = b"".join(export(api, path, params).streaming_content)

    response = export(api, path, params, HTTP_ACCEPT_ENCODING="gzip")
    chunks = list(response.streaming_content)

    assert response.streaming
    assert response["Content-Encoding"] == "gzip"
    assert not response.has_header("ETag")
    assert not response.has_header("Content-Length")
    assert len(chunks) > 2  # compressed as it goes, not once at the end
    assert gzip.decompress(b"".join(chunks)) == plain


@pytest.mark.slow
def test_streaming_the_demos_biggest_export_holds_a_small_part_of_it(api: APIClient, demo: Cluster) -> None:
    path, params = "export.json", {"reasons": "true"}
    # The first export reads what the cluster's readers share (its parsed inventory, its
    # grid's texts): kept between requests, bounded by CACHE_ENTRIES, not this test's concern.
    sent = sum(len(chunk) for chunk in export(api, path, params).streaming_content)
    tracemalloc.start()
    try:
        again = sum(len(chunk) for chunk in export(api, path, params).streaming_content)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert again == sent > 50_000_000
    assert peak < sent / 20, f"{peak:,} bytes held at once while sending {sent:,}"
