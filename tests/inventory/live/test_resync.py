"""Full resyncs of live clusters: every kind listed into the database, errors per kind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inventory import kube
from inventory.live.resync import RESYNC_ATTEMPTS, cluster_resync, kind_resync
from inventory.models import Cluster, Kind, Resource, SyncState
from inventory.signals import inventory_changed
from tests.fakes.kube_api import FakeKubeAPI
from tests.inventory.live.objects import broken_model, model, one_of_each, runtime
from tests.support.net import free_port

pytestmark = pytest.mark.django_db


def stored(cluster: Cluster, kind: str | None = None) -> dict[tuple[str, str, str], dict[str, Any]]:
    resources = Resource.objects.filter(cluster=cluster)
    if kind:
        resources = resources.filter(kind=kind)
    return {r.key: r.obj for r in resources}


def states(cluster: Cluster) -> dict[str, SyncState]:
    return {state.kind: state for state in SyncState.objects.filter(cluster=cluster)}


def test_full_resync_stores_every_object_of_every_kind_as_the_api_returned_it(fake, cluster) -> None:
    created = [fake.create(obj) for obj in one_of_each()]

    result = cluster_resync(cluster)

    assert result.errors == {}
    expected = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in created}
    assert stored(cluster) == expected
    assert result.applied.counts[Kind.BASE_MODEL].added == 2
    by_kind = states(cluster)
    assert set(by_kind) == set(Kind.values)
    for kind, state in by_kind.items():
        assert state.last_list_at is not None
        assert state.resource_version == fake.resource_version
        assert state.last_error == ""
        assert state.count == sum(1 for key in expected if key[0] == kind)
    resource = Resource.objects.get(cluster=cluster, kind=Kind.CLUSTER_BASE_MODEL, name="llama")
    assert (resource.model_format, resource.model_architecture, resource.error) == (
        "safetensors",
        "LlamaForCausalLM",
        "",
    )
    assert resource.resource_version == created[0]["metadata"]["resourceVersion"]
    assert resource.uid == created[0]["metadata"]["uid"]


def test_resync_updates_changed_objects_and_removes_deleted_ones(fake, cluster) -> None:
    fake.create(model("keep"))
    fake.create(model("change"))
    fake.create(model("gone"))
    cluster_resync(cluster)
    fake.patch("clusterbasemodels", "change", {"spec": {"modelArchitecture": "MistralForCausalLM"}})
    fake.delete("clusterbasemodels", "gone")

    result = cluster_resync(cluster)

    counts = result.applied.counts[Kind.CLUSTER_BASE_MODEL]
    assert (counts.added, counts.changed, counts.removed, counts.unchanged) == (0, 1, 1, 1)
    assert sorted(name for _, _, name in stored(cluster)) == ["change", "keep"]
    assert Resource.objects.get(cluster=cluster, name="change").model_architecture == "MistralForCausalLM"


def test_resync_announces_the_changes_after_commit(fake, cluster, django_capture_on_commit_callbacks) -> None:
    fake.create(model("m1"))
    received: list[dict[str, Any]] = []

    def receiver(sender: object, **kwargs: Any) -> None:
        received.append(kwargs)

    inventory_changed.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            cluster_resync(cluster)
    finally:
        inventory_changed.disconnect(receiver)

    assert [(r["cluster_id"], [c.to_dict() for c in r["changes"]]) for r in received] == [
        (cluster.pk, [{"kind": "ClusterBaseModel", "namespace": "", "name": "m1", "action": "added", "fields": []}])
    ]


def test_a_malformed_object_is_stored_with_its_error_and_the_rest_sync(fake, cluster) -> None:
    fake.create(broken_model("broken"))
    fake.create(model("fine"))

    result = cluster_resync(cluster)

    assert result.errors == {}
    broken = Resource.objects.get(cluster=cluster, name="broken")
    assert broken.error == "spec.modelFormat: expected a mapping, got str"
    assert broken.obj["spec"] == {"modelFormat": "safetensors"}
    assert Resource.objects.get(cluster=cluster, name="fine").error == ""
    state = states(cluster)[Kind.CLUSTER_BASE_MODEL]
    assert (state.count, state.invalid, state.last_error) == (2, 1, "")


def test_a_server_error_on_one_kind_is_recorded_for_that_kind_only(fake, cluster) -> None:
    for obj in one_of_each():
        fake.create(obj)
    fake.fail_next(1, 500, kinds="servingruntimes", verbs="list")

    result = cluster_resync(cluster)

    assert list(result.errors) == [Kind.SERVING_RUNTIME]
    assert isinstance(result.transient_error(), kube.KubeUnavailable)
    by_kind = states(cluster)
    failed = by_kind.pop(Kind.SERVING_RUNTIME)
    assert failed.last_error == "API server error (500)"
    assert failed.last_error_at is not None
    assert failed.last_list_at is None
    assert all(state.last_error == "" and state.last_list_at for state in by_kind.values())
    assert len(stored(cluster)) == len(one_of_each()) - 1


def test_a_missing_crd_is_reported_for_its_kind_and_keeps_what_was_stored(fake, cluster) -> None:
    fake.create(runtime("vllm"))
    fake.create(model("llama"))
    cluster_resync(cluster)
    fake.remove_kind("clusterservingruntimes")

    result = cluster_resync(cluster)

    assert {kind: error.message for kind, error in result.errors.items()} == {
        Kind.CLUSTER_SERVING_RUNTIME: "OME CRD clusterservingruntimes not installed (404)"
    }
    assert result.transient_error() is None
    assert (
        states(cluster)[Kind.CLUSTER_SERVING_RUNTIME].last_error == "OME CRD clusterservingruntimes not installed (404)"
    )
    assert states(cluster)[Kind.CLUSTER_BASE_MODEL].last_error == ""
    # Not pruned: an unanswered list says nothing about what exists.
    assert (Kind.CLUSTER_SERVING_RUNTIME, "", "vllm") in stored(cluster)


def test_refused_credentials_are_reported_for_every_kind(start_fake, cluster_for) -> None:
    fake = start_fake(token="right")
    cluster = cluster_for(fake, token="wrong")

    result = cluster_resync(cluster)

    assert set(result.errors) == set(Kind.values)
    assert {state.last_error for state in states(cluster).values()} == {"credentials refused (401)"}
    assert len(fake.requests) == 1  # refused once means refused for every kind: not asked again


def test_an_unreachable_server_is_reported_and_other_clusters_keep_syncing(fake, cluster_for, tmp_path) -> None:
    fake.create(model("llama"))
    healthy = cluster_for(fake, "healthy")
    down = cluster_for(FakeKubeAPI(port=free_port()), "down")  # nothing listens there

    down_result = cluster_resync(down)
    healthy_result = cluster_resync(healthy)

    assert set(down_result.errors) == set(Kind.values)
    messages = {state.last_error for state in states(down).values()}
    assert len(messages) == 1
    assert messages.pop() == "API server unreachable (MaxRetryError)"
    assert healthy_result.errors == {}
    assert list(stored(healthy)) == [(Kind.CLUSTER_BASE_MODEL, "", "llama")]


def test_an_unusable_kubeconfig_is_reported_for_every_kind(db, tmp_path: Path) -> None:
    cluster = Cluster.objects.create(name="bad", source=Cluster.Source.KUBECONFIG, kubeconfig=str(tmp_path / "none"))

    result = cluster_resync(cluster)

    assert set(result.errors) == set(Kind.values)
    message = states(cluster)[Kind.BASE_MODEL].last_error
    assert message == f"kubeconfig {tmp_path / 'none'}: cannot read it (No such file or directory)"


def test_two_clusters_with_the_same_object_names_are_kept_apart(start_fake, cluster_for) -> None:
    east, west = start_fake(), start_fake()
    east.create(model("llama", architecture="LlamaForCausalLM"))
    west.create(model("llama", architecture="MistralForCausalLM"))
    west.create(runtime("team-rt", "team-a"))
    east_cluster, west_cluster = cluster_for(east, "east"), cluster_for(west, "west")
    cluster_resync(east_cluster)
    cluster_resync(west_cluster)
    west.delete("clusterbasemodels", "llama")

    cluster_resync(west_cluster)

    assert (
        stored(east_cluster, Kind.CLUSTER_BASE_MODEL)[(Kind.CLUSTER_BASE_MODEL, "", "llama")]["spec"][
            "modelArchitecture"
        ]
        == "LlamaForCausalLM"
    )
    assert stored(west_cluster, Kind.CLUSTER_BASE_MODEL) == {}
    assert list(stored(west_cluster, Kind.SERVING_RUNTIME)) == [(Kind.SERVING_RUNTIME, "team-a", "team-rt")]
    assert stored(east_cluster, Kind.SERVING_RUNTIME) == {}


def test_a_list_older_than_what_a_watch_stored_is_listed_again(fake, cluster) -> None:
    fake.create(model("llama"))
    SyncState.objects.create(cluster=cluster, kind=Kind.CLUSTER_BASE_MODEL, resource_version="999999")
    api = kube.client_for(cluster)

    try:
        resource_version = kind_resync(cluster, Kind.CLUSTER_BASE_MODEL, api=api)
    finally:
        kube.close(api)

    # A watch ahead of every list means the server's numbering restarted: the last list wins.
    assert len([r for r in fake.requests if r.verb == "list"]) == RESYNC_ATTEMPTS
    assert resource_version == fake.resource_version
    assert states(cluster)[Kind.CLUSTER_BASE_MODEL].resource_version == fake.resource_version
    assert list(stored(cluster)) == [(Kind.CLUSTER_BASE_MODEL, "", "llama")]


def test_a_manifest_cluster_reloads_its_folders_and_prunes(db, tmp_path: Path) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "a.yaml").write_text(
        "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: a}\n"
        "spec: {modelFormat: {name: safetensors}, storage: {storageUri: 'hf://x/a'}}\n"
    )
    (folder / "b.yaml").write_text((folder / "a.yaml").read_text().replace("name: a", "name: b"))
    cluster = Cluster.objects.create(name="snap", source=Cluster.Source.MANIFESTS, manifests=[str(folder)])
    cluster_resync(cluster)
    (folder / "b.yaml").unlink()

    result = cluster_resync(cluster)

    assert result.applied.counts[Kind.CLUSTER_BASE_MODEL].removed == 1
    assert [r.name for r in Resource.objects.filter(cluster=cluster)] == ["a"]
