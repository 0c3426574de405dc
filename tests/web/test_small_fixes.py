"""Issue 13's smaller fixes: size ranges in words, the legend, the home page's search, the
patch page's title, unknown namespaces and clusters, the matrix page's weight."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from inventory.models import Cluster, Resource
from tests.support.grid import grid_cells
from tests.support.inventory import inventory_from_objects
from tests.web.conftest import CATALOG_RUNTIME, SEED_MODEL
from web.pages.runtime import size_range_text


@pytest.mark.parametrize(
    ("size_range", "text"),
    [
        ({"min": "6B", "max": "10B"}, "6B to 10B"),
        ({"min": "1B"}, "at least 1B (no max)"),
        ({"max": "13B"}, "at most 13B (no min)"),
        ({}, "any size (neither min nor max is set)"),
    ],
)
def test_a_size_range_reads_as_a_person_writes_it(size_range: dict[str, str], text: str) -> None:
    runtime = {"kind": "ClusterServingRuntime", "metadata": {"name": "r"}, "spec": {"modelSizeRange": size_range}}
    parsed = inventory_from_objects([runtime]).runtimes[("ClusterServingRuntime", "", "r")]

    assert size_range_text(parsed) == text


def test_the_runtime_page_shows_the_range_in_words(client: Client, cluster: Cluster) -> None:
    runtime = Resource.objects.get(cluster=cluster, name="srt-ling-lite")

    html = client.get(reverse("matrix:runtime", args=[runtime.pk])).content.decode()

    assert "Model size range: <strong>6B to 10B</strong>" in html
    assert "SizeRange(" not in html


def test_the_legend_says_numbers_are_scores_not_counts(client: Client, cluster: Cluster) -> None:
    html = client.get(reverse("matrix:matrix")).content.decode()
    legend = html.split('<ul class="legend"')[1].split("</ul>")[0]

    assert '<span class="swatch s-selected" aria-hidden="true"><i>score</i></span>' in legend
    assert "A number in a cell is OME's score for that runtime, not a count" in legend
    assert not re.search(r">\d+</span>", legend)


def test_the_home_page_searches_models_runtimes_and_services(client: Client, cluster: Cluster) -> None:
    home = client.get(reverse("home")).content.decode()
    assert f'action="{reverse("search")}" role="search"' in home

    html = client.get(reverse("search"), {"q": "qwen-image"}).content.decode()

    model = Resource.objects.get(cluster=cluster, name=SEED_MODEL)
    runtime = Resource.objects.get(cluster=cluster, name=CATALOG_RUNTIME)
    assert f'<a href="{reverse("matrix:model", args=[model.pk])}">{SEED_MODEL}</a>' in html
    assert f'<a href="{reverse("matrix:runtime", args=[runtime.pk])}">{CATALOG_RUNTIME}</a>' in html
    assert "research/qwen-image</a>" in html  # an InferenceService, linked to its row
    assert "Models <span" in html


def test_the_patch_title_says_make_x_match_only_while_it_does_not(client: Client, cluster: Cluster) -> None:
    model = Resource.objects.get(cluster=cluster, name=SEED_MODEL)
    matching_runtime = Resource.objects.get(cluster=cluster, name=CATALOG_RUNTIME)
    excluding_runtime = Resource.objects.get(cluster=cluster, name="srt-qwen-image-pipeline")
    url = reverse("patches:patch", args=[model.pk])

    already = client.get(url, {"runtime": matching_runtime.pk}).content.decode()
    needed = client.get(url, {"runtime": excluding_runtime.pk}).content.decode()

    assert f'<h1 id="patch-title">{SEED_MODEL} already matches {CATALOG_RUNTIME}</h1>' in already
    assert "<title>Make" not in already
    assert f'<h1 id="patch-title">Make {SEED_MODEL} match srt-qwen-image-pipeline</h1>' in needed


def test_an_unknown_namespace_or_cluster_is_a_400_naming_it_in_the_api(cluster: Cluster) -> None:
    api = APIClient()

    namespace = api.get("/api/v1/matrix/cells/", {"namespace": "nope"})
    missing_cluster = api.get("/api/v1/matrix/cells/", {"cluster": "nope"})
    known = api.get("/api/v1/matrix/cells/", {"namespace": "team-b"})

    assert namespace.status_code == 400
    assert namespace.json()["field"] == "namespace"
    assert "namespace 'nope' has no rows in the matrix of cluster 'demo'" in namespace.json()["detail"]
    assert "team-b" in namespace.json()["detail"]
    assert missing_cluster.status_code == 400
    assert missing_cluster.json()["field"] == "cluster"
    assert "no cluster named 'nope'" in missing_cluster.json()["detail"]
    assert known.status_code == 200


def test_an_unknown_namespace_or_cluster_gets_a_message_on_the_pages(client: Client, cluster: Cluster) -> None:
    namespace = client.get(reverse("matrix:matrix"), {"namespace": "nope"})
    assert namespace.status_code == 400
    html = namespace.content.decode()
    assert "namespace &#x27;nope&#x27; has no rows in the matrix of cluster &#x27;demo&#x27;" in html
    assert '<option value="nope" selected>nope (no rows)</option>' in html
    assert "(cluster scope)</option>" in html  # offered, but not shown as the answer
    assert '<table class="grid"' not in html

    for name in ("matrix:isvcs", "lint:lint"):
        response = client.get(reverse(name), {"cluster": "nope"})
        assert response.status_code == 404
        assert "No cluster named “nope”" in response.content.decode()
        assert f'href="{reverse(name)}?cluster=demo">demo</a>' in response.content.decode()


def test_a_full_page_of_the_matrix_is_light(client: Client, cluster: Cluster) -> None:
    """50 models by 60 runtimes: the grid's cells carry nothing but a status letter and a text."""
    response = client.get(reverse("matrix:matrix"), {"cols": "all"})

    cells = grid_cells(response.content.decode())
    assert len({cell.model for cell in cells.values()}) == 50
    assert len({cell.runtime for cell in cells.values()}) == 60
    assert len(response.content) < 150_000, len(response.content)
