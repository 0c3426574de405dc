"""/api/v1/ clusters, sync states, models, runtimes and InferenceServices over the demo cluster."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest
from rest_framework.test import APIClient

from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Kind, Resource
from matrix.freshness import STATES, cluster_freshness

pytestmark = pytest.mark.django_db


def names(response: Any) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["name"] for item in response.json()["results"]}


def all_names(api: APIClient, url: str, **params: Any) -> set[str]:
    found: set[str] = set()
    page = 1
    while True:
        body = api.get(url, {**params, "page": page, "page_size": 1000}).json()
        found |= {item["name"] for item in body["results"]}
        if body["next"] is None:
            return found
        page += 1


def stored(cluster: Cluster, kinds: tuple[str, ...], **lookups: Any) -> set[str]:
    return set(Resource.objects.filter(cluster=cluster, kind__in=kinds, **lookups).values_list("name", flat=True))


def test_clusters_list_their_source_and_sync_state_per_kind(api: APIClient, demo: Cluster) -> None:
    response = api.get("/api/v1/clusters/")

    assert response.status_code == 200
    [cluster] = response.json()["results"]
    assert cluster["name"] == "demo"
    assert cluster["source"] == "manifests"
    sync = {state["kind"]: state for state in cluster["sync"]}
    assert set(sync) == set(Kind.values)
    assert sync["ClusterServingRuntime"]["count"] == 204  # 203 catalog names + the seed's
    assert sync["BaseModel"]["count"] == 3
    assert sync["InferenceService"]["last_list_at"]


def test_one_cluster_is_found_by_name_and_an_unknown_one_is_a_json_404(api: APIClient, demo: Cluster) -> None:
    found = api.get("/api/v1/clusters/demo/")
    missing = api.get("/api/v1/clusters/nope/")

    assert found.json()["name"] == "demo"
    assert missing.status_code == 404
    assert missing.json() == {"detail": "No Cluster matches the given query.", "code": "not_found", "field": None}


def test_one_cluster_says_how_current_it_is_as_every_other_surface(api: APIClient, demo: Cluster) -> None:
    """Issue 36: the cluster detail carried no freshness, unlike every other surface."""
    detail = api.get("/api/v1/clusters/demo/").json()
    listed = api.get("/api/v1/clusters/").json()["results"][0]

    assert detail["freshness"] == cluster_freshness(demo).to_dict()
    assert detail["freshness"]["state"] in STATES
    assert "freshness" not in listed  # one judgement per cluster costs queries: the detail only


def test_sync_states_filter_by_cluster_and_kind(api: APIClient, demo: Cluster) -> None:
    response = api.get("/api/v1/sync-states/", {"cluster": "demo", "kind": "BaseModel"})

    [state] = response.json()["results"]
    assert (state["cluster"], state["kind"], state["count"]) == ("demo", "BaseModel", 3)


def test_models_list_both_model_kinds_and_no_runtimes(api: APIClient, demo: Cluster) -> None:
    body = api.get("/api/v1/models/", {"page_size": 1000}).json()

    assert body["count"] == 208 + 3
    assert {item["kind"] for item in body["results"]} == {"ClusterBaseModel", "BaseModel"}
    assert "obj" not in body["results"][0]


MODEL_FILTERS: list[tuple[dict[str, str], dict[str, Any]]] = [
    ({"kind": "BaseModel"}, {"kind": "BaseModel"}),
    ({"namespace": "team-b"}, {"namespace": "team-b"}),
    ({"namespace": "_cluster"}, {"namespace": ""}),
    ({"search": "QWEN"}, {"name__icontains": "qwen"}),
    ({"name": "qwen-image-pvc"}, {"name": "qwen-image-pvc"}),
    ({"model_format": "safetensors"}, {"model_format": "safetensors"}),
    ({"model_architecture": "LlamaForCausalLM"}, {"model_architecture": "LlamaForCausalLM"}),
    ({"pipeline_class": "QwenImagePipeline"}, {"pipeline_class": "QwenImagePipeline"}),
    ({"has_pipeline": "true"}, {"has_pipeline": True}),
    ({"storage_scheme": "pvc"}, {"storage_scheme": "pvc://"}),
    ({"storage_scheme": "hf://"}, {"storage_scheme": "hf://"}),
    (
        {"cluster": "demo", "kind": "ClusterBaseModel", "has_pipeline": "false"},
        {"kind": "ClusterBaseModel", "has_pipeline": False},
    ),
]


@pytest.mark.parametrize(("params", "lookups"), MODEL_FILTERS, ids=[urlencode(params) for params, _ in MODEL_FILTERS])
def test_model_filters_select_what_the_columns_say(
    api: APIClient, demo: Cluster, params: dict[str, str], lookups: dict[str, Any]
) -> None:
    expected = stored(demo, MODEL_KINDS, **lookups)

    assert expected, "the demo should have models for every filter"
    assert all_names(api, "/api/v1/models/", **params) == expected


def test_runtime_format_filter_matches_any_entry_but_not_part_of_a_name(api: APIClient, demo: Cluster) -> None:
    runtimes = Resource.objects.filter(cluster=demo, kind__in=RUNTIME_KINDS)
    listing = {r.name for r in runtimes if "safetensors" in r.model_format.split(",")}

    found = all_names(api, "/api/v1/runtimes/", model_format="safetensors")
    partial = all_names(api, "/api/v1/runtimes/", model_format="safe")

    assert found == listing
    assert partial == set()


def test_runtimes_filter_by_kind_namespace_and_pipeline(api: APIClient, demo: Cluster) -> None:
    namespaced = all_names(api, "/api/v1/runtimes/", kind="ServingRuntime", namespace="team-b")
    pipeline = all_names(api, "/api/v1/runtimes/", has_pipeline="true")

    assert namespaced == stored(demo, ("ServingRuntime",), namespace="team-b")
    assert "srt-qwen-image-pipeline" in pipeline
    assert pipeline == {
        r.name for r in Resource.objects.filter(cluster=demo, kind__in=RUNTIME_KINDS, has_pipeline=True)
    }


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/v1/models/", "invalid"),
        ("/api/v1/models/", "has_pipeline"),
        ("/api/v1/runtimes/", "has_pipeline"),
        ("/api/v1/runtimes/", "disabled"),
        ("/api/v1/matrix/cells/", "has_pipeline"),
    ],
)
def test_a_boolean_filter_takes_true_false_1_0_and_names_any_other_value(
    api: APIClient, demo: Cluster, url: str, field: str
) -> None:
    truthy = [api.get(url, {field: value, "page_size": 1000}) for value in ("true", "TRUE", "1")]
    falsy = [api.get(url, {field: value, "page_size": 1000}) for value in ("false", "0")]
    bad = api.get(url, {field: "maybe"})

    assert {response.status_code for response in truthy + falsy} == {200}
    assert all(response.json()["results"] == truthy[0].json()["results"] for response in truthy)
    assert all(response.json()["results"] == falsy[0].json()["results"] for response in falsy)
    assert truthy[0].json()["results"] != falsy[0].json()["results"]
    assert bad.status_code == 400
    assert bad.json() == {
        "detail": f"{field}: 'maybe' is not a boolean: use true or false.",
        "code": "invalid",
        "field": field,
    }


def test_inference_services_list_and_filter_by_namespace(api: APIClient, demo: Cluster) -> None:
    everything = api.get("/api/v1/inference-services/").json()
    research = names(api.get("/api/v1/inference-services/", {"namespace": "research"}))

    assert everything["count"] == 10
    assert research == stored(demo, (Kind.INFERENCE_SERVICE,), namespace="research")


def test_one_model_comes_with_its_manifest(api: APIClient, demo: Cluster) -> None:
    model = Resource.objects.get(cluster=demo, name="qwen-image-pvc")

    body = api.get(f"/api/v1/models/{model.pk}/").json()

    assert body["obj"] == model.obj
    assert body["kind"] == "ClusterBaseModel"


def test_a_runtime_id_is_not_a_model(api: APIClient, demo: Cluster) -> None:
    runtime = Resource.objects.get(cluster=demo, name="srt-qwen-image-pipeline")

    response = api.get(f"/api/v1/models/{runtime.pk}/")

    assert response.status_code == 404


def test_pages_are_disjoint_and_link_to_each_other(api: APIClient, demo: Cluster) -> None:
    first = api.get("/api/v1/models/", {"page_size": 5}).json()
    second = api.get(first["next"]).json()

    assert len(first["results"]) == len(second["results"]) == 5
    assert not {m["id"] for m in first["results"]} & {m["id"] for m in second["results"]}
    assert first["previous"] is None
    assert second["previous"].endswith("page_size=5")
    assert first["count"] == second["count"] == 211


def test_a_page_past_the_end_is_a_404_naming_page(api: APIClient, demo: Cluster) -> None:
    response = api.get("/api/v1/models/", {"page": 999})

    assert response.status_code == 404
    assert response.json()["field"] == "page"
    assert response.json()["code"] == "invalid_page"


def test_ordering_by_name_descending(api: APIClient, demo: Cluster) -> None:
    results = api.get("/api/v1/runtimes/", {"ordering": "-name", "page_size": 20}).json()["results"]

    assert [r["name"] for r in results] == sorted((r["name"] for r in results), reverse=True)
