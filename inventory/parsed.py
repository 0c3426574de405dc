"""A cluster's inventory as `matching` values, parsed once per object version per process."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from django.db import connection

import matching
from core.cache import Entry, VersionedCache
from matching import InferenceService, Model, ObjectKey, Runtime

from .models import MODEL_KINDS, Cluster, Kind, Resource
from .ome_release import Judgement, judge

Parsed = Model | Runtime | InferenceService

# Resource id -> its parsed value at a content hash: a worker re-reads only objects that changed.
_PARSED: VersionedCache[str, Parsed] = VersionedCache("parsed_objects")


@dataclass
class Inventory:
    """The parsed objects of one cluster, with their resource ids both ways."""

    cluster_id: int
    models: dict[ObjectKey, Model] = field(default_factory=dict)
    runtimes: dict[ObjectKey, Runtime] = field(default_factory=dict)
    isvcs: dict[ObjectKey, InferenceService] = field(default_factory=dict)
    invalid: dict[ObjectKey, str] = field(default_factory=dict)
    ids: dict[ObjectKey, int] = field(default_factory=dict)
    fingerprint: str = ""
    behaviour: matching.Behaviour = field(default_factory=lambda: matching.as_behaviour(matching.DEFAULT_BEHAVIOUR))
    """The OME profile that judges this cluster (inventory.ome_release.judge)."""

    @cached_property
    def keys(self) -> dict[int, ObjectKey]:
        return {rid: key for key, rid in self.ids.items()}

    @cached_property
    def candidates(self) -> matching.CandidateIndex:
        """The models indexed by what a runtime's entries could match (the what-if's overlay)."""
        return matching.CandidateIndex(self.models)

    @cached_property
    def grid(self) -> matching.Grid:
        return self.grid_for(self.behaviour)

    def grid_for(self, behaviour: matching.BehaviourInput) -> matching.Grid:
        """The grid under another OME's behaviour (the cluster's own is `grid`)."""
        if matching.as_behaviour(behaviour) == self.behaviour and "grid" in self.__dict__:
            return self.grid
        return matching.grid(self.models.values(), self.runtimes.values(), self.isvcs.values(), behaviour=behaviour)

    @property
    def model_keys(self) -> list[ObjectKey]:
        """Every model key, malformed models included."""
        return sorted(set(self.models) | {key for key in self.invalid if key[0] in MODEL_KINDS})

    def namespaces_for(self, model_key: ObjectKey) -> list[str]:
        """A BaseModel is selected for in its namespace; a ClusterBaseModel at cluster scope
        ("") and in every namespace that holds ServingRuntimes or InferenceServices."""
        if model_key[0] == Kind.BASE_MODEL:
            return [model_key[1]]
        return ["", *self.grid.namespaces]

    def copy(self, *, fingerprint: str) -> Inventory:
        """A new Inventory holding the same objects under another fingerprint; `put` and
        `remove` on either leave the other as it was."""
        return Inventory(
            cluster_id=self.cluster_id,
            models=dict(self.models),
            runtimes=dict(self.runtimes),
            isvcs=dict(self.isvcs),
            invalid=dict(self.invalid),
            ids=dict(self.ids),
            fingerprint=fingerprint,
            behaviour=self.behaviour,
        )

    # `put` and `remove` are for an Inventory being built: `grid`, `keys` and `candidates` are read once.
    def put(self, key: ObjectKey, value: Parsed) -> None:
        """Files a parsed object under its key, in place of any malformed one."""
        self.invalid.pop(key, None)
        if isinstance(value, Model):
            self.models[key] = value
        elif isinstance(value, Runtime):
            self.runtimes[key] = value
        else:
            self.isvcs[key] = value

    def remove(self, key: ObjectKey) -> None:
        """Takes the object out, id included."""
        for table in (self.ids, self.models, self.runtimes, self.isvcs, self.invalid):
            table.pop(key, None)


def _parse_cached(resource_id: int, content_hash: str, obj: dict | None) -> Parsed:
    """The parsed object; `obj` is needed only when this version was not parsed before."""

    def parse(_stale: Entry[str, Parsed] | None) -> Parsed:
        assert obj is not None, f"resource {resource_id} has no cached parse and no body"
        return matching.parse_object(obj)

    return _PARSED.get(resource_id, content_hash, parse)


def _fingerprint(cluster: Cluster, version: int, behaviour: str) -> str:
    """Names what the inventory's verdicts depend on: unique per cluster incarnation, inventory
    version and the OME profile that judges the cluster."""
    return f"{cluster.pk}@{cluster.created_at.timestamp()}:v{version}:{behaviour}"


_STATE_FIELDS = ("inventory_version", "source", "ome_version", "ome_version_source", "ome_version_evidence")


def cluster_state(cluster: Cluster) -> tuple[int, Judgement]:
    """The cluster's inventory version and the profile judging it, read fresh (one query)."""
    row = Cluster.objects.values(*_STATE_FIELDS, "ome_version_admin").get(pk=cluster.pk)
    fresh = Cluster(pk=cluster.pk, **{key: value for key, value in row.items() if key != "inventory_version"})
    return int(row["inventory_version"]), judge(fresh)


def inventory_fingerprint(cluster: Cluster) -> str:
    """Changes whenever any object of the cluster is added, changed or removed, and whenever
    the profile that judges the cluster changes."""
    version, judgement = cluster_state(cluster)
    return _fingerprint(cluster, version, judgement.behaviour.name)


# (cluster id, cluster creation time) -> the Inventory at an inventory version; reused while
# nothing changed, caught up from the objects changed since otherwise. The creation time tells
# apart a cluster deleted and created again under the same id.
_LOADED: VersionedCache[int, Inventory] = VersionedCache("inventories")

_HEAD_FIELDS = ("id", "kind", "namespace", "name", "content_hash", "error")


def _place(inventory: Inventory, head: tuple[int, str, str, str, str, str], body: dict | None) -> None:
    rid, kind, namespace, name, digest, error = head
    key = (kind, namespace, name)
    inventory.ids[key] = rid
    if error:
        inventory.invalid[key] = error
        return
    inventory.put(key, _parse_cached(rid, digest, body))


def _bodies(heads: list[tuple[int, str, str, str, str, str]]) -> dict[int, dict]:
    missing = [head[0] for head in heads if not head[5] and not _PARSED.has(head[0], head[4])]
    bodies: dict[int, dict] = {}
    for start in range(0, len(missing), 2000):
        bodies.update(Resource.objects.filter(pk__in=missing[start : start + 2000]).values_list("id", "obj"))
    return bodies


def _full_load(cluster: Cluster, version: int, behaviour: matching.Behaviour) -> Inventory:
    fingerprint = _fingerprint(cluster, version, behaviour.name)
    inventory = Inventory(cluster_id=cluster.pk, fingerprint=fingerprint, behaviour=behaviour)
    heads = list(Resource.objects.filter(cluster=cluster).values_list(*_HEAD_FIELDS))
    bodies = _bodies(heads)
    for head in heads:
        _place(inventory, head, bodies.get(head[0]))
    return inventory


def _catch_up(cluster: Cluster, since: int, previous: Inventory, version: int) -> Inventory:
    """A new Inventory: `previous` plus the objects changed after version `since`, minus the
    removed ones. Applying a change twice is harmless, so a concurrent writer cannot make it
    miss anything that the next catch-up would not bring."""
    inventory = previous.copy(fingerprint=_fingerprint(cluster, version, previous.behaviour.name))
    present = set(Resource.objects.filter(cluster=cluster).values_list("id", flat=True))
    changed = list(Resource.objects.filter(cluster=cluster, version__gt=since).values_list(*_HEAD_FIELDS))
    changed_ids = {head[0] for head in changed}
    for key, rid in list(inventory.ids.items()):
        if rid not in present or rid in changed_ids:
            inventory.remove(key)
    bodies = _bodies(changed)
    for head in changed:
        _place(inventory, head, bodies.get(head[0]))
    return inventory


def load_inventory(cluster: Cluster) -> Inventory:
    """The cluster's parsed inventory: the same object while nothing changed, else the last one
    caught up with what changed since (reading only the changed objects).

    Inside a transaction the cache is neither read nor filled: the transaction may see, or
    make, changes that a rollback would undo while their version number gets reused.
    """
    version, judgement = cluster_state(cluster)  # read before the objects: a later change is caught next time
    behaviour = judgement.behaviour
    if connection.in_atomic_block:
        return _full_load(cluster, version, behaviour)

    def load(stale: Entry[int, Inventory] | None) -> Inventory:
        if stale is not None and stale.version < version:
            return _catch_up(cluster, stale.version, stale.value, version)
        return _full_load(cluster, version, behaviour)

    return _LOADED.get((cluster.pk, cluster.created_at, behaviour.name), version, load)


def pipeline_plan(model: Resource, runtime: Resource) -> matching.PatchPlan:
    """What `matching.pipeline_patch` plans for a stored model and runtime: the smallest
    `{"spec": {"diffusionPipeline": ...}}` merge patch (or None), the entry it targets, and why
    no patch can help (`blocked`), under the profile that judges the cluster. ManifestError
    when either stored object is malformed. With pipeline_fixable, the one home of patch
    planning over stored objects (the rule itself is matching's)."""
    return matching.pipeline_patch(model.obj, runtime.obj, behaviour=judge(model.cluster).behaviour)


def unusable_from(model: Resource, namespace: str) -> str | None:
    """The admission webhook's refusal when services in `namespace` use the stored model, under
    the profile that judges the cluster (a pvc:// ClusterBaseModel of another namespace:
    `matching.pvc_namespace_denial`); None when it admits them, for cluster scope ("") and for
    a malformed model."""
    if not namespace:
        return None
    try:
        parsed = matching.parse_model(model.obj)
    except matching.ManifestError:
        return None
    return matching.pvc_namespace_denial(parsed, namespace, behaviour=judge(model.cluster).behaviour)


def pipeline_fixable(
    inventory: Inventory, pairs: Iterable[tuple[ObjectKey, ObjectKey]]
) -> set[tuple[ObjectKey, ObjectKey]]:
    """The (model, runtime) pairs where a diffusionPipeline patch of the model makes it pass the
    runtime."""
    fixable = set()
    for model_key, runtime_key in pairs:
        model, runtime = inventory.models.get(model_key), inventory.runtimes.get(runtime_key)
        if model is None or runtime is None:
            continue
        if matching.pipeline_patch(model, runtime, behaviour=inventory.behaviour).patch is not None:
            fixable.add((model_key, runtime_key))
    return fixable
