"""Every page answers with a fixed number of queries for the bundled catalog, whatever the page
of the grid; the timings are printed (run with -s), not asserted: a shared CI machine's clock
says little, a query count says what grows with the data.

Measured on the development machine (2 cores, busy): the matrix renders in about 110 ms of CPU
(50 models x 50 runtimes, 2,500 cells), the other pages in 5-90 ms; see docs/tour.md.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from inventory.models import Cluster, Resource

# (name, url builder, max queries): anonymous reads, so no session queries. A page of one
# cluster spends two or three on its freshness banner (matrix.freshness).
PAGES: list[tuple[str, Callable[[dict[str, Resource]], str], int]] = [
    ("matrix", lambda o: reverse("matrix:matrix"), 11),
    (
        "matrix page 3, all runtimes, 2nd column page",
        lambda o: f"{reverse('matrix:matrix')}?page=3&cols=all&cpage=2",
        11,
    ),
    ("matrix filtered by status", lambda o: f"{reverse('matrix:matrix')}?status=manual-only&namespace=team-b", 12),
    ("matrix counts", lambda o: f"{reverse('matrix:matrix-counts')}?cluster=demo&namespace=_cluster", 11),
    ("matrix version", lambda o: f"{reverse('matrix:matrix-version')}?cluster=demo&since=0", 2),
    ("cell", lambda o: reverse("matrix:cell", args=[o["model"].pk, o["runtime"].pk, "_cluster"]), 12),
    ("cell reason", lambda o: reverse("matrix:cell-reason", args=[o["model"].pk, o["runtime"].pk, "_cluster"]), 7),
    ("model", lambda o: reverse("matrix:model", args=[o["model"].pk]), 16),
    ("runtime", lambda o: reverse("matrix:runtime", args=[o["runtime"].pk]), 13),
    (
        "patch preview",
        lambda o: f"{reverse('patches:patch', args=[o['model'].pk])}?runtime={o['runtime'].pk}",
        9,
    ),  # + the stored object the what-if validates the patched one against
    ("model_index.json", lambda o: reverse("patches:model-index", args=[o["model"].pk]), 3),
    ("InferenceServices", lambda o: f"{reverse('matrix:isvcs')}?cluster=demo", 16),
    ("lint", lambda o: f"{reverse('lint:lint')}?cluster=demo", 10),  # + the fix manifests not held yet
    ("sync", lambda o: reverse("sync"), 5),
    ("history", lambda o: f"{reverse('history')}?cluster=demo", 6),
    ("search", lambda o: f"{reverse('search')}?q=qwen", 3),
]


@pytest.fixture
def cluster(proven_demo: Cluster, db: None) -> Cluster:
    """The demo as the proving task leaves it: the lint page with its fixes (lint.proving)."""
    return proven_demo


@pytest.mark.parametrize(("name", "url", "queries"), PAGES, ids=[page[0] for page in PAGES])
def test_the_page_uses_a_fixed_number_of_queries(
    client: Client,
    cluster: Cluster,
    seed_model: Resource,
    seed_runtime: Resource,
    django_assert_max_num_queries: Any,
    name: str,
    url: Callable[[dict[str, Resource]], str],
    queries: int,
) -> None:
    path = url({"model": seed_model, "runtime": seed_runtime})
    client.get(path)  # warm: templates compiled, the inventory parsed and cached per process

    started = time.process_time()
    with django_assert_max_num_queries(queries):
        response = client.get(path)
    spent = time.process_time() - started

    assert response.status_code == 200
    print(f"\n{name}: {spent * 1000:.0f} ms CPU, {len(response.content) // 1024} KiB")
