"""Conditional GETs of the matrix cells: an ETag per build generation, query and reader; a 304
for a client that holds the page; never a stale page after the matrix changed."""

from __future__ import annotations

import copy

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from inventory.models import Cluster, Resource
from inventory.sync import event_apply
from matrix.services import matrix_apply_changes
from tests.support.access import grant

pytestmark = pytest.mark.django_db

CELLS = "/api/v1/matrix/cells/"
SEED_CELL = {"model_name": "qwen-image-pvc", "runtime_name": "srt-qwen-image-pipeline", "namespace": "_cluster"}


def test_a_page_comes_with_an_etag_and_a_client_holding_it_gets_a_304(api: APIClient, demo: Cluster) -> None:
    first = api.get(CELLS, {"page_size": 5})
    etag = first["ETag"]

    again = api.get(CELLS, {"page_size": 5}, HTTP_IF_NONE_MATCH=etag)
    other_page = api.get(CELLS, {"page_size": 5, "page": 2}, HTTP_IF_NONE_MATCH=etag)

    assert first.status_code == 200
    assert etag.startswith('"')
    assert etag.endswith('"')
    assert "no-cache" in first["Cache-Control"]
    assert "private" in first["Cache-Control"]
    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == etag
    assert again["X-OME-Build"] == first["X-OME-Build"]
    assert other_page.status_code == 200
    assert other_page["ETag"] != etag


def test_a_matrix_update_changes_the_etag_and_the_page(api: APIClient, demo: Cluster) -> None:
    before = api.get(CELLS, SEED_CELL)
    model = Resource.objects.get(cluster=demo, name="qwen-image-pvc")
    obj = copy.deepcopy(model.obj)
    obj["spec"]["diffusionPipeline"] = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}
    change = event_apply(demo, "MODIFIED", obj)
    assert change is not None
    matrix_apply_changes(demo, [change.to_dict()])

    after = api.get(CELLS, SEED_CELL, HTTP_IF_NONE_MATCH=before["ETag"])
    again = api.get(CELLS, SEED_CELL)

    assert before.json()["results"][0]["status"] == "excluded"
    assert after.status_code == 200
    assert after["ETag"] != before["ETag"]
    assert after.json()["results"][0]["status"] == "selected"
    assert again.json() == after.json()


def test_the_etag_depends_on_who_asks(api: APIClient, demo: Cluster) -> None:
    anonymous = api.get(CELLS, {"page_size": 5})
    api.force_authenticate(User.objects.create_user("ada"))

    signed_in = api.get(CELLS, {"page_size": 5}, HTTP_IF_NONE_MATCH=anonymous["ETag"])

    assert signed_in.status_code == 200
    assert signed_in["ETag"] != anonymous["ETag"]
    assert signed_in.json()["results"] == anonymous.json()["results"]


def test_an_invalid_query_is_still_a_400_whatever_the_client_holds(api: APIClient, demo: Cluster) -> None:
    held = api.get(CELLS, {"page_size": 5})["ETag"]

    response = api.get(CELLS, {"status": "nope"}, HTTP_IF_NONE_MATCH=held)

    assert response.status_code == 400
    assert response.json()["field"] == "status"


def test_a_held_page_of_a_named_cluster_costs_its_build_and_freshness_and_a_new_page_reads_the_build_once(
    api: APIClient, demo: Cluster, django_assert_num_queries
) -> None:
    query = {"cluster": demo.name, "page_size": 5}
    etag = api.get(CELLS, query)["ETag"]

    # The build with its cluster: the freshness the page shows is judged from that build (and a
    # manifest snapshot has no sync states to read).
    with django_assert_num_queries(1):
        held = api.get(CELLS, query, HTTP_IF_NONE_MATCH=etag)
    with django_assert_num_queries(1):
        cached = api.get(CELLS, query)
    # The build and the page's rows: the query's filters were parsed for its first page.
    with django_assert_num_queries(2):
        new = api.get(CELLS, {**query, "page": 2})
    assert (held.status_code, cached.status_code, new.status_code) == (304, 200, 200)
    assert cached["ETag"] == etag


def test_a_query_is_parsed_once_per_build_generation_and_reader(
    api: APIClient, demo: Cluster, settings, django_assert_num_queries
) -> None:
    settings.API_ANONYMOUS_READ = False
    query = {"cluster": demo.name, "page_size": 5, "status": "excluded"}
    namespace = Resource.objects.filter(cluster=demo).exclude(namespace="").values_list("namespace", flat=True)[0]
    readers = {"whole": {"cluster": demo.name}, "narrow": {"cluster": demo.name, "namespace": namespace}}
    for name, where in readers.items():
        grant(User.objects.create_user(name), "viewer", **where)
    api.force_authenticate(User.objects.get(username="whole"))
    whole = api.get(CELLS, query)
    # The reader's rights (identity, groups, grants), the build and the page's rows: no cluster
    # choice, no layout, no runtimes read again.
    with django_assert_num_queries(5):
        second = api.get(CELLS, {**query, "page": 2})
    api.force_authenticate(User.objects.get(username="narrow"))
    narrow = api.get(CELLS, query)
    other_filter = api.get(CELLS, {**query, "status": "nope"})

    assert (whole.status_code, second.status_code, narrow.status_code) == (200, 200, 200)
    assert second.json()["count"] == whole.json()["count"]
    # Another reader's rights select other rows: nothing parsed for the first reader is reused.
    assert 0 < narrow.json()["count"] < whole.json()["count"]
    assert {cell["namespace"] for cell in narrow.json()["results"]} <= {namespace, "_cluster"}
    assert other_filter.status_code == 400
    assert other_filter.json()["field"] == "status"
