"""`manage.py sync_cluster`: list once, or list and watch until Ctrl-C / SIGTERM."""

from __future__ import annotations

import os
import signal
import threading
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from inventory.models import Cluster, Kind, Resource, SyncState
from inventory.signals import inventory_changed
from tests.inventory.live.objects import model, one_of_each


def sync_cluster(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("sync_cluster", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_once_lists_every_kind_into_the_inventory_and_exits(fake, cluster) -> None:
    for obj in one_of_each():
        fake.create(obj)

    out, err = sync_cluster("--cluster", cluster.name, "--once")

    assert out.splitlines() == [
        "ClusterBaseModel: 1 added, 0 changed, 0 removed, 0 unchanged",
        "BaseModel: 2 added, 0 changed, 0 removed, 0 unchanged",
        "ClusterServingRuntime: 1 added, 0 changed, 0 removed, 0 unchanged",
        "ServingRuntime: 1 added, 0 changed, 0 removed, 0 unchanged",
        "InferenceService: 1 added, 0 changed, 0 removed, 0 unchanged",
    ]
    assert err == ""
    assert Resource.objects.filter(cluster=cluster).count() == len(one_of_each())
    assert [r.verb for r in fake.requests if r.plural] == ["list"] * 5


@pytest.mark.django_db
def test_once_reports_a_failed_kind_and_exits_non_zero(fake, cluster) -> None:
    fake.create(model("llama"))
    fake.remove_kind("inferenceservices")
    out, err = StringIO(), StringIO()

    with pytest.raises(CommandError, match="1 of 5 kinds failed") as caught:
        call_command("sync_cluster", "--once", stdout=out, stderr=err)  # the only cluster

    assert caught.value.returncode == 1
    assert err.getvalue() == "InferenceService: OME CRD inferenceservices not installed (404)\n"
    assert "ClusterBaseModel: 1 added" in out.getvalue()
    assert Resource.objects.get(cluster=cluster).name == "llama"


@pytest.mark.django_db
def test_a_manifest_cluster_is_reloaded_from_its_folders(tmp_path: Path) -> None:
    (tmp_path / "m.yaml").write_text(
        "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: m}\n"
        "spec: {modelFormat: {name: safetensors}, storage: {storageUri: 'hf://x/m'}}\n"
    )
    cluster = Cluster.objects.create(name="snap", source=Cluster.Source.MANIFESTS, manifests=[str(tmp_path)])

    out, _ = sync_cluster("--cluster", "snap")  # nothing to watch: returns after the reload

    assert "ClusterBaseModel: 1 added" in out
    assert Resource.objects.filter(cluster=cluster).count() == 1


@pytest.mark.django_db
def test_an_unknown_cluster_is_an_error() -> None:
    with pytest.raises(CommandError, match="no cluster named 'nope'"):
        sync_cluster("--cluster", "nope", "--once")


@pytest.mark.django_db(transaction=True)
def test_without_once_it_watches_applies_changes_and_stops_cleanly_on_sigterm(fake, cluster) -> None:
    # One kind: the watcher thread is then the only writer of SQLite's shared in-memory test
    # database (which fails concurrent writers instead of waiting). Several kinds are one
    # thread each, the same code.
    fake.create(model("before"))
    stored = threading.Event()

    def on_change(sender: object, changes: list[Any], **kwargs: Any) -> None:
        if any(change.name == "during" for change in changes):
            stored.set()

    def operator() -> None:
        assert fake.wait_for_watch("clusterbasemodels")
        fake.create(model("during"))
        assert stored.wait(10)
        os.kill(os.getpid(), signal.SIGTERM)

    inventory_changed.connect(on_change)
    previous = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=operator)
    thread.start()
    try:
        out, _ = sync_cluster("--cluster", cluster.name, "--kind", Kind.CLUSTER_BASE_MODEL)
    finally:
        thread.join(10)
        inventory_changed.disconnect(on_change)

    assert signal.getsignal(signal.SIGTERM) is previous  # handlers restored
    lines = out.splitlines()
    assert lines[0] == "ClusterBaseModel: 1 added, 0 changed, 0 removed, 0 unchanged"
    assert lines[1] == "watching 1 kinds of cluster live; Ctrl-C to stop"
    assert lines[2].startswith("ADDED ClusterBaseModel during at ")
    assert lines[-1] == "stopped"
    assert sorted(Resource.objects.filter(cluster=cluster).values_list("name", flat=True)) == ["before", "during"]
    state = SyncState.objects.get(cluster=cluster, kind=Kind.CLUSTER_BASE_MODEL)
    assert (state.watch_connected, state.watch_owner, state.resource_version) == (False, "", fake.resource_version)
    assert fake.wait_for(lambda: fake.active_watches() == 0)
