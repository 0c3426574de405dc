"""The API for tooling: a cell and a selection asked for by kind, namespace and name; page sizes
over the cap refused, naming the cap."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from core.api import namespace_tokens
from inventory.models import Cluster, Resource

pytestmark = pytest.mark.django_db

MODEL = {"model_kind": "ClusterBaseModel", "model_namespace": "_cluster", "model_name": "qwen-image-pvc"}


def test_a_cell_by_names_is_the_cell_by_ids(api: APIClient, demo: Cluster) -> None:
    model = Resource.objects.get(cluster=demo, name="qwen-image-pvc")
    runtime = Resource.objects.get(cluster=demo, name="srt-qwen-image-pipeline")

    by_ids = api.get("/api/v1/matrix/cell/", {"model": model.pk, "runtime": runtime.pk})
    by_names = api.get("/api/v1/matrix/cell/", {"cluster": "demo", **MODEL, "runtime_name": "srt-qwen-image-pipeline"})

    assert by_names.status_code == 200, by_names.content
    assert by_names.json() == by_ids.json()


def test_a_selection_by_names_is_the_selection_by_id(api: APIClient, demo: Cluster) -> None:
    model = Resource.objects.get(cluster=demo, name="qwen-image-pvc")

    by_id = api.get("/api/v1/matrix/selection/", {"model": model.pk, "namespace": "team-a"})
    by_name = api.get("/api/v1/matrix/selection/", {"model_name": "qwen-image-pvc", "namespace": "team-a"})

    assert by_name.status_code == 200, by_name.content
    assert by_name.json() == by_id.json()


def test_an_unknown_or_missing_name_is_a_400_naming_the_field(api: APIClient, demo: Cluster) -> None:
    unknown = api.get("/api/v1/matrix/selection/", {"model_name": "nope"})
    missing = api.get("/api/v1/matrix/cell/", {**MODEL})

    assert (unknown.status_code, unknown.json()["field"]) == (400, "model_name")
    assert "'nope'" in unknown.json()["detail"]
    assert (missing.status_code, missing.json()["field"]) == (400, "runtime")


def test_an_ambiguous_name_asks_for_kind_and_namespace(api: APIClient, demo: Cluster) -> None:
    twin = Resource.objects.get(cluster=demo, name="srt-qwen-image-pipeline")
    twin.pk, twin.kind, twin.namespace, twin.uid = None, "ServingRuntime", "team-a", "twin-uid"
    twin.save()

    response = api.get("/api/v1/matrix/cell/", {**MODEL, "runtime_name": "srt-qwen-image-pipeline"})
    chosen = api.get(
        "/api/v1/matrix/cell/",
        {**MODEL, "runtime_name": "srt-qwen-image-pipeline", "runtime_kind": "ClusterServingRuntime"},
    )

    assert response.status_code == 400
    assert response.json()["field"] == "runtime_name"
    assert "runtime_kind and runtime_namespace" in response.json()["detail"]
    assert chosen.status_code == 200, chosen.content


@pytest.mark.parametrize("size", ["1001", "0", "-3", "many"])
def test_a_page_size_outside_1_to_the_cap_is_a_400_naming_the_cap(api: APIClient, demo: Cluster, size: str) -> None:
    response = api.get("/api/v1/matrix/cells/", {"page_size": size})

    assert response.status_code == 400
    assert response.json()["field"] == "page_size"
    assert "1000" in response.json()["detail"]


def test_every_namespace_in_a_cells_page_uses_the_query_token(api: APIClient, demo: Cluster) -> None:
    page = api.get("/api/v1/matrix/cells/", {"model_name": "qwen-image-pvc", "page_size": 1000}).json()
    scoped = api.get("/api/v1/matrix/cells/", {"model_name": "qwen-image-pvc", "namespace": "_cluster"}).json()

    assert "" not in {c["namespace"] for c in page["results"]}
    assert scoped["count"] == sum(c["namespace"] == "_cluster" for c in page["results"])


def test_scope_tokens_leave_kubernetes_objects_as_they_are() -> None:
    data = {
        "namespace": "",
        "rows": [{"namespace": "team-a", "namespaces": ["", "team-b"]}],
        "object": {"metadata": {"namespace": ""}},
        "patch": {"metadata": {"namespace": ""}},
    }

    assert namespace_tokens(data) == {
        "namespace": "_cluster",
        "rows": [{"namespace": "team-a", "namespaces": ["_cluster", "team-b"]}],
        "object": {"metadata": {"namespace": ""}},
        "patch": {"metadata": {"namespace": ""}},
    }
