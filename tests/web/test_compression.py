"""Pages and API answers go out gzip-compressed to clients that accept it, each padded with a
few random bytes (Django's GZipMiddleware against BREACH-style length oracles)."""

from __future__ import annotations

import gzip

import pytest
from django.test import Client

from inventory.models import Cluster

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path", ["/lint/", "/matrix/", "/api/v1/matrix/lint/"])
def test_a_page_or_answer_is_compressed_for_a_client_that_accepts_gzip(
    demo: Cluster, client: Client, path: str
) -> None:
    plain = client.get(path)
    packed = client.get(path, HTTP_ACCEPT_ENCODING="gzip")

    assert (plain.status_code, packed.status_code) == (200, 200)
    assert "Content-Encoding" not in plain
    assert packed["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed["Vary"]
    assert len(gzip.decompress(packed.content)) == len(plain.content)
    assert len(packed.content) < len(plain.content) / 4


def test_the_same_page_compresses_to_different_lengths(demo: Cluster, client: Client) -> None:
    lengths = {len(client.get("/lint/", HTTP_ACCEPT_ENCODING="gzip").content) for _ in range(6)}

    assert len(lengths) > 1
