"""What-if input checked against OME's own CRD schemas before it is evaluated, and values OME
accepts but cannot match warned about and evaluated anyway."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from access.scope import SYSTEM
from inventory.models import Cluster, Resource
from matching import schema_problems
from whatif.errors import WhatIfError
from whatif.services import whatif

RUNTIME = ("ClusterServingRuntime", "", "srt-qwen-image")


def stored(demo: Cluster, key: tuple[str, str, str]) -> dict[str, Any]:
    resource = Resource.objects.get(cluster=demo, kind=key[0], namespace=key[1], name=key[2])
    obj = copy.deepcopy(resource.obj)
    obj.pop("status", None)
    return obj


def problems_of(demo: Cluster, change: Any) -> list[tuple[str, str]]:
    obj = stored(demo, RUNTIME)
    change(obj)
    with pytest.raises(WhatIfError) as caught:
        whatif(demo, yaml.safe_dump(obj), scope=SYSTEM)
    return [(problem.path, problem.message) for problem in caught.value.problems]


@pytest.mark.django_db
def test_every_stored_demo_object_passes_its_crd_schema(demo: Cluster) -> None:
    failing = {
        resource.name: schema_problems(resource.obj)
        for resource in Resource.objects.filter(
            cluster=demo, kind__in=["ClusterServingRuntime", "ServingRuntime", "BaseModel", "ClusterBaseModel"]
        )
        if [problem for problem in schema_problems(resource.obj) if problem.blocking]
    }

    assert failing == {}


@pytest.mark.django_db
def test_an_unknown_field_is_reported_with_its_path(demo: Cluster) -> None:
    def typo(obj: dict[str, Any]) -> None:
        entry = obj["spec"]["supportedModelFormats"][0]
        entry["modelArchitectur"] = entry.pop("modelArchitecture", "QwenImagePipeline")

    problems = problems_of(demo, typo)

    assert problems == [
        (
            "spec.supportedModelFormats[0].modelArchitectur",
            "unknown field: OME's CRD does not declare it (the API server drops it, kubectl rejects it)",
        )
    ]


@pytest.mark.django_db
def test_every_problem_of_a_document_is_listed_and_the_message_names_the_first(demo: Cluster) -> None:
    def broken(obj: dict[str, Any]) -> None:
        obj["spec"]["supportedModelFormats"][0]["priority"] = "high"
        obj["spec"]["supportedModelFormats"][0]["autoSelect"] = "yes"
        obj["spec"]["colour"] = "blue"

    obj = stored(demo, RUNTIME)
    broken(obj)
    with pytest.raises(WhatIfError) as caught:
        whatif(demo, yaml.safe_dump(obj), scope=SYSTEM)

    paths = [problem.path for problem in caught.value.problems]
    assert paths == [
        "spec.colour",
        "spec.supportedModelFormats[0].autoSelect",
        "spec.supportedModelFormats[0].priority",
    ]
    assert str(caught.value).startswith("document 1: ClusterServingRuntime srt-qwen-image: spec.colour: unknown field")
    assert "(and 2 more)" in str(caught.value)
    assert caught.value.problems[2].message == 'expected an integer, got "high"'


@pytest.mark.django_db
def test_a_malformed_quantity_is_reported_with_its_path(demo: Cluster) -> None:
    def lots(obj: dict[str, Any]) -> None:
        container = {
            "name": "engine",
            "image": "sglang:latest",
            "resources": {"limits": {"cpu": "lots", "memory": "8Gi"}},
        }
        obj["spec"]["containers"] = [container]

    problems = problems_of(demo, lots)

    assert problems == [
        ("spec.containers[0].resources.limits.cpu", "'lots' is not a Kubernetes quantity (such as 2, 500m or 4Gi)")
    ]


@pytest.mark.django_db
def test_a_priority_below_the_crds_minimum_is_refused(demo: Cluster) -> None:
    problems = problems_of(demo, lambda obj: obj["spec"]["supportedModelFormats"][0].update(priority=0))

    assert problems == [("spec.supportedModelFormats[0].priority", "0 is less than the minimum of 1")]


@pytest.mark.django_db
def test_values_ome_accepts_but_cannot_match_are_warned_about_and_evaluated_anyway(demo: Cluster) -> None:
    obj = stored(demo, RUNTIME)
    obj["spec"]["modelSizeRange"] = {"min": "huge"}
    obj["spec"]["supportedModelFormats"][0]["modelFormat"]["operator"] = "Equalish"

    result = whatif(demo, yaml.safe_dump(obj), scope=SYSTEM)

    warnings = {warning.path: warning.problem for warning in result.warnings}
    assert set(warnings) == {"spec.modelSizeRange.min", "spec.supportedModelFormats[0].modelFormat.operator"}
    assert "counts this size as 0" in warnings["spec.modelSizeRange.min"]
    assert warnings["spec.supportedModelFormats[0].modelFormat.operator"].startswith(
        'operator "Equalish" is not one of'
    )
    assert result.to_dict()["warnings"][0]["object"] == {
        "kind": "ClusterServingRuntime",
        "namespace": "_cluster",
        "name": "srt-qwen-image",
    }
    assert result.rows_evaluated > 0  # evaluated, as OME would


@pytest.mark.django_db
def test_a_missing_required_field_is_a_warning_not_a_refusal(demo: Cluster) -> None:
    obj = stored(demo, ("ClusterBaseModel", "", "qwen-image"))
    del obj["spec"]["storage"]

    result = whatif(demo, yaml.safe_dump(obj), scope=SYSTEM)

    assert [(w.path, w.problem) for w in result.warnings] == [
        ("spec", "'storage' is a required property: the API server would refuse the object")
    ]


@pytest.mark.django_db
def test_the_api_lists_every_problem(demo: Cluster, client: Any) -> None:
    obj = stored(demo, RUNTIME)
    obj["spec"]["supportedModelFormats"][0]["modelArchitectur"] = "X"
    obj["spec"]["supportedModelFormats"][0]["priority"] = -1

    response = client.post(
        "/api/v1/matrix/whatif/", {"manifests": yaml.safe_dump(obj)}, content_type="application/json"
    )

    body = response.json()
    assert response.status_code == 400
    assert body["code"] == "invalid_manifest"
    assert body["field"] == "spec.supportedModelFormats[0].modelArchitectur"
    assert [problem["path"] for problem in body["problems"]] == [
        "spec.supportedModelFormats[0].modelArchitectur",
        "spec.supportedModelFormats[0].priority",
    ]


@pytest.mark.django_db
def test_a_field_the_cluster_already_holds_is_not_blamed_on_the_edit(demo: Cluster) -> None:
    resource = Resource.objects.get(cluster=demo, kind=RUNTIME[0], namespace=RUNTIME[1], name=RUNTIME[2])
    newer = copy.deepcopy(resource.obj)
    newer["spec"]["fieldOfANewerOME"] = True  # as a cluster running a newer OME would hold it
    Resource.objects.filter(pk=resource.pk).update(obj=newer)
    edited = copy.deepcopy(newer)
    edited.pop("status", None)
    edited["spec"]["supportedModelFormats"][0]["autoSelect"] = False

    whatif(demo, yaml.safe_dump(edited), scope=SYSTEM)  # no error for the stored field

    edited["spec"]["anotherTypo"] = 1
    with pytest.raises(WhatIfError) as caught:
        whatif(demo, yaml.safe_dump(edited), scope=SYSTEM)
    assert [problem.path for problem in caught.value.problems] == ["spec.anotherTypo"]
