"""A viewer of namespace team-a reads cluster-scoped objects and team-a's, and no name or count
of team-b or of a cluster they have no role on, through every read path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from inventory.models import Cluster, Resource

from .conftest import LEAKS, signed_in

pytestmark = pytest.mark.django_db


def ids(cluster: Cluster) -> dict[str, int]:
    return {resource.name: resource.pk for resource in Resource.objects.filter(cluster__name=cluster.name)}


def read_paths(cluster: Cluster) -> list[str]:
    """Every GET a viewer of team-a may make, none naming team-b: each must answer without it."""
    pk = ids(cluster)
    shared, runtime, alpha = pk["shared-llama"], pk["shared-runtime"], pk["alpha-model"]
    return [
        "/matrix/?cluster=tenants",
        "/matrix/?cluster=tenants&namespace=team-a",
        "/matrix/counts/?cluster=tenants&namespace=team-a",
        f"/models/{shared}/",
        f"/models/{alpha}/",
        f"/runtimes/{runtime}/",
        f"/cells/{shared}/{runtime}/team-a/",
        "/inferenceservices/?cluster=tenants",
        "/lint/?cluster=tenants",
        "/sync/",
        "/api/v1/clusters/",
        "/api/v1/sync-states/",
        "/api/v1/models/",
        f"/api/v1/models/{shared}/",
        "/api/v1/runtimes/",
        "/api/v1/inference-services/",
        "/api/v1/inference-services/verdicts/?cluster=tenants",
        "/api/v1/matrix/cells/?cluster=tenants",
        "/api/v1/matrix/cells/export.csv?cluster=tenants&reasons=true",
        "/api/v1/matrix/cells/export.json?cluster=tenants&reasons=true",
        f"/api/v1/matrix/cell/?model={shared}&runtime={runtime}&namespace=team-a",
        f"/api/v1/matrix/selection/?model={shared}&namespace=team-a",
        "/api/v1/matrix/builds/",
        "/api/v1/matrix/history/",
        "/api/v1/matrix/lint/?cluster=tenants",
        "/fleet/",
        "/fleet/?view=runtimes",
        "/api/v1/fleet/",
        "/api/v1/fleet/runtimes/",
    ]


def text_of(response: Any) -> str:
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return body.decode()


def test_every_read_path_answers_without_a_name_of_team_b_or_another_cluster(
    tenants: Cluster, other_cluster: Cluster, viewer_a: Any
) -> None:
    client = signed_in(viewer_a)
    leaks = {}
    for path in read_paths(tenants):
        response = client.get(path)
        text = text_of(response)
        assert response.status_code == 200, (path, response.status_code, text[:300])
        found = [word for word in LEAKS if word in text]
        if found:
            leaks[path] = found
    assert leaks == {}
    # ...and they do show team-a and the cluster-scoped objects.
    assert "alpha-model" in text_of(client.get("/api/v1/models/"))
    assert "shared-llama" in text_of(client.get("/matrix/?cluster=tenants&namespace=team-a"))


def test_objects_rows_and_clusters_of_others_are_not_found(
    tenants: Cluster, other_cluster: Cluster, viewer_a: Any
) -> None:
    client = signed_in(viewer_a)
    pk = ids(tenants)
    bravo, bravo_rt, shared, runtime = pk["bravo-model"], pk["bravo-runtime"], pk["shared-llama"], pk["shared-runtime"]
    elsewhere = ids(other_cluster)["bravo-elsewhere"]
    refused = {
        path: client.get(path).status_code
        for path in (
            f"/models/{bravo}/",
            f"/models/{elsewhere}/",
            f"/runtimes/{bravo_rt}/",
            f"/cells/{bravo}/{runtime}/team-b/",
            f"/cells/{shared}/{runtime}/team-b/",
            f"/models/{bravo}/patch/?runtime={runtime}",
            f"/models/{bravo}/model-index/",
            f"/api/v1/models/{bravo}/",
            f"/api/v1/runtimes/{bravo_rt}/",
            "/api/v1/clusters/bravo-cluster/",
            f"/api/v1/matrix/selection/?model={shared}&namespace=team-b",
        )
    }
    assert set(refused.values()) == {404}, refused
    # A cluster without a role answers as one that does not exist.
    for page in ("/matrix/", "/lint/", "/inferenceservices/"):
        assert (
            client.get(f"{page}?cluster=bravo-cluster").status_code == client.get(f"{page}?cluster=nowhere").status_code
        )
    # Parameters naming another tenant's objects are invalid choices, as ids that do not exist.
    for path in (
        f"/api/v1/matrix/cell/?model={bravo}&runtime={runtime}",
        f"/api/v1/matrix/cells/?cluster=tenants&model={bravo}",
        "/api/v1/matrix/cells/?cluster=bravo-cluster",
        "/api/v1/matrix/lint/?cluster=bravo-cluster",
        "/api/v1/inference-services/verdicts/?cluster=bravo-cluster",
    ):
        response = client.get(path)
        assert response.status_code in (400, 404), (path, response.status_code)
        assert "bravo-model" not in response.content.decode()


def test_another_namespace_asked_for_by_name_shows_no_rows_or_counts(tenants: Cluster, viewer_a: Any) -> None:
    client = signed_in(viewer_a)

    cells = client.get("/api/v1/matrix/cells/?cluster=tenants&namespace=team-b")
    counts = text_of(client.get("/matrix/counts/?cluster=tenants&namespace=team-b"))
    grid = text_of(client.get("/matrix/?cluster=tenants&namespace=team-b&cols=all"))
    history = client.get("/api/v1/matrix/history/?cluster=tenants&namespace=team-b").json()

    # A namespace the reader cannot read is one that does not exist: a 400 that lists only theirs.
    assert (cells.status_code, cells.json()["field"]) == (400, "namespace")
    assert "bravo" not in cells.content.decode()
    assert "bravo" not in counts
    assert "bravo" not in grid
    assert history["results"] == []


def test_counts_are_the_readers_counts(tenants: Cluster, viewer_a: Any, django_user_model: Any) -> None:
    states = {s["kind"]: s["count"] for s in signed_in(viewer_a).get("/api/v1/sync-states/").json()["results"]}
    [build] = signed_in(viewer_a).get("/api/v1/matrix/builds/").json()["results"]
    admin = django_user_model.objects.create_superuser("root")
    everything = {s["kind"]: s["count"] for s in signed_in(admin).get("/api/v1/sync-states/").json()["results"]}

    assert (states["BaseModel"], states["ServingRuntime"], states["InferenceService"]) == (1, 1, 1)
    assert (everything["BaseModel"], everything["ServingRuntime"], everything["InferenceService"]) == (2, 2, 2)
    # A build's totals count every namespace: only readers of the whole cluster see them.
    assert (build["models_count"], build["rows_count"]) == (None, None)


def test_a_whatif_shows_only_the_readers_rows_and_refuses_another_namespace(tenants: Cluster, viewer_a: Any) -> None:
    client = signed_in(viewer_a)
    changed = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "shared-runtime"},
        "spec": {"supportedModelFormats": [{"modelFormat": {"name": "safetensors"}, "autoSelect": True}]},
    }
    foreign = {**changed, "kind": "ServingRuntime", "metadata": {"name": "bravo-runtime", "namespace": "team-b"}}

    seen = client.post("/api/v1/matrix/whatif/", {"cluster": "tenants", "objects": [changed]}, "application/json")
    refused = client.post("/api/v1/matrix/whatif/", {"cluster": "tenants", "objects": [foreign]}, "application/json")
    deleted = client.post(
        "/api/v1/matrix/whatif/",
        {"cluster": "tenants", "deletions": ["ServingRuntime/team-b/bravo-runtime"]},
        "application/json",
    )

    assert seen.status_code == 200, seen.content
    assert {row["namespace"] for row in seen.json()["rows"]} <= {"_cluster", "team-a"}
    assert "bravo" not in seen.content.decode()
    assert refused.status_code == 400
    assert "not readable to you" in refused.json()["detail"]
    assert deleted.status_code == 400
    assert (
        "bravo-runtime is not in the cluster" in deleted.json()["detail"]
        or "not in the cluster" in deleted.json()["detail"]
    )


def test_metrics_report_only_clusters_the_scraper_reads_whole(tenants: Cluster, client: Client, settings: Any) -> None:
    settings.DEBUG = True  # a local copy: no token needed, the anonymous scope applies

    closed = client.get("/metrics").content.decode()
    settings.API_ANONYMOUS_READ = True
    opened = client.get("/metrics").content.decode()

    assert 'cluster="tenants"' not in closed
    assert 'cluster="tenants"' in opened


def test_the_audit_log_needs_its_permission_and_shows_the_readers_attempts(
    tenants: Cluster, viewer_a: Any, patcher_a: Any, django_user_model: Any
) -> None:
    from django.contrib.auth.models import Permission

    from patches.services import patch_apply

    pk = ids(tenants)
    for model in ("alpha-model", "bravo-model"):
        patch_apply(
            tenants, model=pk[model], patch={"spec": {"diffusionPipeline": None}}, resource_version="x", user=patcher_a
        )
    viewer_a.user_permissions.add(Permission.objects.get(codename="view_patchattempt"))
    without = signed_in(patcher_a).get("/api/v1/patches/audit/")
    with_permission = signed_in(django_user_model.objects.get(pk=viewer_a.pk)).get("/api/v1/patches/audit/")

    assert without.status_code == 403
    assert with_permission.status_code == 200
    # The attempt on bravo-model was "not found" for patcher-a: recorded by the reference sent.
    assert [(row["model"]["name"], row["result"]) for row in with_permission.json()["results"]] == [
        (str(pk["bravo-model"]), "not_found"),
        ("alpha-model", "already_applied"),
    ]
    assert "bravo" not in json.dumps(with_permission.json())


def test_a_ci_check_compares_only_the_readers_part_and_refuses_other_namespaces(
    tenants: Cluster, viewer_a: Any
) -> None:
    client = signed_in(viewer_a)
    shared = (
        "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: shared-runtime}\n"
        "spec:\n  supportedModelFormats:\n  - modelFormat: {name: safetensors}\n    autoSelect: true\n"
    )
    foreign = shared.replace("ClusterServingRuntime", "ServingRuntime").replace(
        "{name: shared-runtime}", "{name: bravo-runtime, namespace: team-b}"
    )

    seen = client.post(
        "/api/v1/whatif/check/", {"cluster": "tenants", "manifests": shared, "prune": True}, "application/json"
    )
    refused = client.post("/api/v1/whatif/check/", {"cluster": "tenants", "manifests": foreign}, "application/json")

    assert seen.status_code == 200, seen.content
    assert "bravo" not in seen.content.decode()
    assert refused.status_code == 400
    assert "not readable to you" in refused.json()["detail"]
