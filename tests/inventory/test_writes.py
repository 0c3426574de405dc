"""The inventory's writes for callers outside the sync (a patch): `returned_store` keeps a newer
stored version, `object_locked`/`object_replace` change one object in place with everything a
write does (columns, counts, version, announcement)."""

from __future__ import annotations

from typing import Any

import pytest

from inventory.live.events import watch_events_apply
from inventory.models import Cluster, Kind, Resource
from inventory.signals import inventory_changed
from inventory.sync import object_locked, object_replace, returned_store
from tests.inventory.live.objects import model

pytestmark = pytest.mark.django_db


def versioned(obj: dict[str, Any], version: int) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(version)}}


@pytest.fixture
def cluster() -> Cluster:
    cluster = Cluster.objects.create(name="writes", source=Cluster.Source.KUBECONFIG, kubeconfig="/nowhere")
    watch_events_apply(cluster, Kind.BASE_MODEL, [("ADDED", versioned(model("llama", "team-a"), 7))])
    return cluster


def test_a_returned_object_older_than_the_stored_one_is_not_stored(cluster: Cluster) -> None:
    older = versioned(model("llama", "team-a", architecture="MistralForCausalLM"), 6)

    assert returned_store(cluster, older) is None

    stored = Resource.objects.get(cluster=cluster, name="llama")
    assert (stored.resource_version, stored.model_architecture) == ("7", "LlamaForCausalLM")


def test_a_newer_returned_object_is_stored_in_its_namespace_with_its_columns(cluster: Cluster) -> None:
    newer = versioned(model("llama", "team-a", architecture="MistralForCausalLM"), 8)

    change = returned_store(cluster, newer)

    assert change is not None
    assert (change.namespace, change.name) == ("team-a", "llama")
    stored = Resource.objects.get(cluster=cluster, name="llama")
    assert (stored.resource_version, stored.model_architecture) == ("8", "MistralForCausalLM")


def test_a_replaced_object_gets_a_new_version_and_is_announced(
    cluster: Cluster, django_capture_on_commit_callbacks: Any
) -> None:
    announced: list[Any] = []

    def receiver(**kwargs: Any) -> None:
        announced.append(kwargs)

    inventory_changed.connect(receiver)
    try:
        resource = Resource.objects.get(cluster=cluster, name="llama")
        before = resource.version
        with django_capture_on_commit_callbacks(execute=True), object_locked(cluster, resource.pk) as current:
            assert current is not None
            obj = {**current.obj, "spec": {**current.obj["spec"], "diffusionPipeline": {"className": "X"}}}
            replaced = object_replace(cluster, current, obj)
    finally:
        inventory_changed.disconnect(receiver)

    assert replaced.version > before
    assert replaced.has_pipeline
    [(change,)] = [kwargs["changes"] for kwargs in announced]
    assert (change.name, change.action) == ("llama", "changed")


def test_a_replacement_may_not_change_the_objects_identity(cluster: Cluster) -> None:
    resource = Resource.objects.get(cluster=cluster, name="llama")
    renamed = {**resource.obj, "metadata": {**resource.obj["metadata"], "name": "other"}}
    with pytest.raises(ValueError, match="must keep"), object_locked(cluster, resource.pk) as current:
        object_replace(cluster, current or resource, renamed)
    assert not Resource.objects.filter(cluster=cluster, name="other").exists()
