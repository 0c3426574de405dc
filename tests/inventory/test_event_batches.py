"""A batch of watch events (inventory.sync.events_apply) stores what the same events stored one
by one would, whatever they do to one object within the batch: the same objects with the same
content, the same kinds' counts and the same changes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.models import Cluster, Kind, Resource, SyncState
from inventory.sync import Event, event_apply, events_apply
from tests.inventory.live.objects import broken_model, model

pytestmark = pytest.mark.django_db

ARCHITECTURES = ("LlamaForCausalLM", "Qwen2ForCausalLM", None)  # None: an invalid model
NAMES = ("a", "b", "c")
NAMESPACES = (None, "team-a")  # a ClusterBaseModel, or a BaseModel
_clusters = itertools.count()


def _object(name: str, namespace: str | None, architecture: str | None) -> dict[str, Any]:
    if architecture is None:
        obj = broken_model(name)
        if namespace:
            obj = {**obj, "kind": "BaseModel", "metadata": {**obj["metadata"], "namespace": namespace}}
        return obj
    return model(name, namespace, architecture=architecture)


events = st.lists(
    st.builds(
        lambda event_type, name, namespace, architecture: (event_type, _object(name, namespace, architecture)),
        st.sampled_from(["ADDED", "MODIFIED", "DELETED"]),
        st.sampled_from(NAMES),
        st.sampled_from(NAMESPACES),
        st.sampled_from(ARCHITECTURES),
    ),
    max_size=30,
)


def _new_cluster() -> Cluster:
    cluster = Cluster.objects.create(
        name=f"batches-{next(_clusters)}", source=Cluster.Source.KUBECONFIG, kubeconfig="/x"
    )
    for kind in (Kind.CLUSTER_BASE_MODEL, Kind.BASE_MODEL):
        SyncState.objects.create(cluster=cluster, kind=kind)
    return cluster


def _stored(cluster: Cluster) -> tuple[Any, ...]:
    objects = sorted(
        Resource.objects.filter(cluster=cluster).values_list("kind", "namespace", "name", "content_hash", "error")
    )
    counts = sorted(SyncState.objects.filter(cluster=cluster).values_list("kind", "count", "invalid"))
    return tuple(objects), tuple(counts)


def _changes(changes: list[Any]) -> list[Any]:
    return [
        None if change is None else (change.kind, change.namespace, change.name, change.action, change.fields)
        for change in changes
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=events, cuts=st.lists(st.integers(min_value=1, max_value=30), max_size=5))
def test_events_stored_in_batches_equal_the_same_events_stored_one_by_one(events: list[Event], cuts: list[int]) -> None:
    one_by_one, batched = _new_cluster(), _new_cluster()

    singly = [event_apply(one_by_one, event_type, obj) for event_type, obj in events]
    together: list[Any] = []
    for start, end in itertools.pairwise([0, *sorted(set(cuts)), len(events)]):
        together.extend(events_apply(batched, events[start:end]))

    assert _changes(together) == _changes(singly)
    assert _stored(batched) == _stored(one_by_one)


def test_an_object_removed_and_added_again_in_one_batch_is_stored_anew() -> None:
    cluster = _new_cluster()
    events_apply(cluster, [("ADDED", model("a"))])
    first = Resource.objects.get(cluster=cluster, name="a")

    changes = events_apply(cluster, [("DELETED", model("a")), ("ADDED", model("a", architecture="Qwen2ForCausalLM"))])

    assert [change.action for change in changes if change] == ["removed", "added"]
    again = Resource.objects.get(cluster=cluster, name="a")
    assert again.pk != first.pk
    assert again.model_architecture == "Qwen2ForCausalLM"
    assert SyncState.objects.get(cluster=cluster, kind=Kind.CLUSTER_BASE_MODEL).count == 1
