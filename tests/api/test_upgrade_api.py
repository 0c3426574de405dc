"""/api/v1/matrix/upgrade/: what another OME would change in a cluster, and why."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

import matching
from inventory.models import Cluster
from inventory.ome_release import ome_version_set_admin

pytestmark = pytest.mark.django_db

SEED_SERVICE = {"kind": "InferenceService", "namespace": "research", "name": "qwen-image-pipeline"}


def test_a_cluster_on_the_newest_ome_compared_with_17b77eda(api: APIClient, demo: Cluster) -> None:
    response = api.get("/api/v1/matrix/upgrade/", {"cluster": demo.name, "to": "17b77eda"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["from"]["profile"], body["to"]["name"]) == (matching.NEWEST_BEHAVIOUR, "17b77eda")
    assert body["ome"]["profile"] == matching.NEWEST_BEHAVIOUR
    assert response["X-OME-Behaviour"].startswith(f"profile={matching.NEWEST_BEHAVIOUR};")
    assert {change["code"] for change in body["changes"]} >= {"U1", "U5", "U7c", "PVC"}
    seed = [item for item in body["differences"] if item["isvc"] == SEED_SERVICE and item["field"] == "verdict"]
    assert [(item["before"], item["after"], item["causes"]) for item in seed] == [("advisory", "blocked", ["U5"])]
    assert seed[0]["explanation"] == (
        "U5 (older OME): an incompatible named runtime is used anyway, with a RuntimeCompatibilityAdvisory event"
    )
    assert body["count"] == len(body["differences"])


def test_the_default_is_the_newest_profile_and_follows_the_clusters_version(api: APIClient, demo: Cluster) -> None:
    same = api.get("/api/v1/matrix/upgrade/", {"cluster": demo.name}).json()
    assert (same["to"]["name"], same["count"], same["changes"]) == (matching.NEWEST_BEHAVIOUR, 0, [])

    ome_version_set_admin(demo, "v0.1.5")
    older = api.get("/api/v1/matrix/upgrade/", {"cluster": demo.name}).json()

    assert older["from"]["profile"] == "17b77eda"
    assert older["from"]["why"] == "OME v0.1.5 given at registration: profile 17b77eda"
    seed = [item for item in older["differences"] if item["isvc"] == SEED_SERVICE and item["field"] == "verdict"]
    assert [(item["before"], item["after"]) for item in seed] == [("blocked", "advisory")]
    assert seed[0]["explanation"].startswith("U5 (newer OME)")


def test_a_proposal_is_compared_as_a_release_and_says_it_is_one(api: APIClient, demo: Cluster) -> None:
    # "what flips on my cluster if upstream merges #603": the score becomes the priority.
    response = api.get("/api/v1/matrix/upgrade/", {"cluster": demo.name, "to": "pr603"})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["to"]["name"], body["to"]["proposal"], body["to"]["commit"]) == ("pr603", True, "ome-projects/ome#603")
    assert [change["code"] for change in body["changes"]] == ["P603"]
    assert body["count"] > 0
    assert all(item["causes"] == ["P603"] for item in body["differences"])


def test_an_unknown_profile_is_a_400_naming_the_field(api: APIClient, demo: Cluster) -> None:
    response = api.get("/api/v1/matrix/upgrade/", {"cluster": demo.name, "to": "v99"})

    assert response.status_code == 400
    assert response.json()["field"] == "to"
    assert "unknown OME behaviour 'v99'" in response.json()["detail"]
