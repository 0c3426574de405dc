"""Bad values from a cluster never stop a sync, on SQLite and PostgreSQL alike: a value too long
for an indexed column is left out of it and said so on the object, a NUL character (which
PostgreSQL cannot store) is dropped and said so, an object whose name cannot be stored is
reported on its kind's sync state, and `register_clusters --sync` goes on."""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from inventory import kube
from inventory.live.resync import cluster_resync
from inventory.models import Cluster, Kind, Resource, SyncState
from matrix.services import matrix_rebuild
from tests.fakes.kube_api import FakeKubeAPI
from tests.inventory.live.watching import run_watch
from tests.patches.seed import documents
from tests.support.matrix import matrix_differences

pytestmark = pytest.mark.django_db

LONG_ARCHITECTURE = "Qwen" + "x" * 1500 + "ForCausalLM"


def model(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": name},
        "spec": {"modelFormat": {"name": "safetensors"}, "storage": {"storageUri": "hf://org/model"}, **spec},
    }


def runtime(name: str, formats: list[str]) -> dict[str, Any]:
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": name},
        "spec": {
            "supportedModelFormats": [{"modelFormat": {"name": f}, "autoSelect": True, "priority": 1} for f in formats],
            "containers": [{"name": "ome-container", "image": "runtime:1"}],
        },
    }


@pytest.fixture
def fake() -> Iterator[FakeKubeAPI]:
    api = FakeKubeAPI().start()
    for obj in documents():
        api.create(obj)
    api.create(model("long-architecture", modelArchitecture=LONG_ARCHITECTURE))
    api.create(model("nul-in-a-label", modelArchitecture="LlamaForCausalLM"))
    api.patch("ClusterBaseModel", "nul-in-a-label", {"metadata": {"labels": {"team": "a\x00b"}}})
    api.create(runtime("many-formats", [f"format-{i:03d}-{'y' * 20}" for i in range(40)]))
    yield api
    api.stop()


@pytest.fixture
def live(fake: FakeKubeAPI, tmp_path: Path, settings: Any) -> Cluster:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    path = fake.write_kubeconfig(tmp_path / "live.kubeconfig")
    settings.OME_CLUSTERS = f"live=kubeconfig:{path}"
    return Cluster.objects.create(name="live", source=Cluster.Source.KUBECONFIG, kubeconfig=str(path))


def test_register_clusters_sync_stores_every_storable_object_and_records_each_problem_on_it(live: Cluster) -> None:
    out = StringIO()

    call_command("register_clusters", "--sync", stdout=out)

    assert "synced" in out.getvalue()
    long = Resource.objects.get(cluster=live, name="long-architecture")
    assert long.model_architecture == LONG_ARCHITECTURE  # unindexed: stored whole
    assert long.error == ""
    runtime = Resource.objects.get(cluster=live, name="many-formats")
    assert runtime.model_format == ""
    assert "model_format (" in runtime.store_error
    assert "longer than 512: not stored in its column" in runtime.store_error
    nul = Resource.objects.get(cluster=live, name="nul-in-a-label")
    assert nul.obj["metadata"]["labels"]["team"] == "ab"
    assert "NUL characters were removed" in nul.store_error
    models = SyncState.objects.get(cluster=live, kind=Kind.CLUSTER_BASE_MODEL)
    assert models.last_error == ""
    assert models.rejected == []


def test_a_listed_object_that_cannot_be_stored_is_reported_on_its_kind_and_the_rest_is_stored(
    live: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The API server refuses such names; a broken proxy or aggregated API might still send one.
    list_kind = kube.list_kind

    def with_a_bad_object(api: Any, kind: str) -> tuple[list[dict[str, Any]], str]:
        items, version = list_kind(api, kind)
        if kind == Kind.CLUSTER_BASE_MODEL:
            items = [*items, model("n" * 300), {"kind": kind, "metadata": {}}]
        return items, version

    monkeypatch.setattr(kube, "list_kind", with_a_bad_object)

    result = cluster_resync(live)

    assert result.errors == {}
    models = SyncState.objects.get(cluster=live, kind=Kind.CLUSTER_BASE_MODEL)
    assert models.rejected == [
        f"ClusterBaseModel '{'n' * 80}... (300 characters)': metadata.name or metadata.namespace is longer than 253 characters",
        "a ClusterBaseModel without metadata.name",
    ]
    assert Resource.objects.filter(cluster=live, name="long-architecture").exists()


def test_the_matrix_of_such_a_cluster_is_built_and_the_long_value_mismatches(live: Cluster) -> None:
    assert cluster_resync(live).errors == {}

    build = matrix_rebuild(live)

    assert build.rows_count > 0
    assert matrix_differences(live) == []


def test_a_second_sync_of_the_same_objects_changes_nothing(live: Cluster) -> None:
    cluster_resync(live)
    version = Cluster.objects.get(pk=live.pk).inventory_version

    result = cluster_resync(live)

    assert result.errors == {}
    assert Cluster.objects.get(pk=live.pk).inventory_version == version


def test_the_api_shows_what_could_not_be_stored(live: Cluster, client: Any) -> None:
    cluster_resync(live)

    runtimes = client.get("/api/v1/runtimes/", {"cluster": "live"}).json()["results"]
    clusters = client.get("/api/v1/clusters/live/").json()

    [many] = [entry for entry in runtimes if entry["name"] == "many-formats"]
    assert "not stored in its column" in many["store_error"]
    states = {state["kind"]: state for state in clusters["sync"]}
    assert states[Kind.CLUSTER_BASE_MODEL]["rejected"] == []
    assert states[Kind.CLUSTER_BASE_MODEL]["last_error"] == ""


def test_a_watched_object_with_bad_values_is_stored_with_what_could_not_be(live: Cluster, fake: FakeKubeAPI) -> None:
    assert cluster_resync(live).errors == {}

    def driver(stop: object) -> None:
        assert fake.wait_for_watch("clusterservingruntimes", timeout=5)
        fake.create(runtime("watched-many-formats", [f"watched-{i:03d}-{'z' * 20}" for i in range(40)]))

    run = run_watch(live, Kind.CLUSTER_SERVING_RUNTIME, driver=driver, until=lambda events: bool(events))

    assert [change[:2] for change in run.changes] == [("ADDED", "watched-many-formats")]
    stored = Resource.objects.get(cluster=live, name="watched-many-formats")
    assert "longer than 512: not stored in its column" in stored.store_error
