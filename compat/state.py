"""A cluster's inventory as `matching` values, parsed once per object version per process."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

import matching
from matching.types import InferenceService, Model, ObjectKey, Runtime

from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Kind, Resource

Parsed = Model | Runtime | InferenceService

# (resource id, content hash) -> parsed value; a worker re-reads only objects that changed.
_PARSED: dict[tuple[int, str], Parsed] = {}
_PARSED_LIMIT = 200_000


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

    @cached_property
    def keys(self) -> dict[int, ObjectKey]:
        return {rid: key for key, rid in self.ids.items()}

    @cached_property
    def grid(self) -> matching.Grid:
        return matching.grid(self.models.values(), self.runtimes.values(), self.isvcs.values())

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


def _parse_cached(resource_id: int, content_hash: str, obj: dict) -> Parsed:  # type: ignore[type-arg]
    key = (resource_id, content_hash)
    value = _PARSED.get(key)
    if value is None:
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.clear()
        value = _PARSED[key] = matching.parse_object(obj)
    return value


def _fingerprint(rows: Iterable[tuple[int, str]]) -> str:
    digest = hashlib.sha256()
    for resource_id, content_hash in sorted(rows):
        digest.update(f"{resource_id}:{content_hash};".encode())
    return digest.hexdigest()


def inventory_fingerprint(cluster: Cluster) -> str:
    """Changes whenever any object of the cluster is added, changed or removed."""
    return _fingerprint(Resource.objects.filter(cluster=cluster).values_list("id", "content_hash"))


# cluster id -> the last Inventory loaded, reused (with its grid's memos) while nothing changed.
_LOADED: dict[int, Inventory] = {}


def load_inventory(cluster: Cluster) -> Inventory:
    """The cluster's parsed inventory; the same object while the inventory is unchanged."""
    heads = list(
        Resource.objects.filter(cluster=cluster).values_list("id", "kind", "namespace", "name", "content_hash", "error")
    )
    fingerprint = _fingerprint((rid, digest) for rid, _k, _ns, _n, digest, _e in heads)
    loaded = _LOADED.get(cluster.pk)
    if loaded is not None and loaded.fingerprint == fingerprint:
        return loaded
    inventory = Inventory(cluster_id=cluster.pk, fingerprint=fingerprint)
    missing = [rid for rid, _k, _ns, _n, digest, error in heads if not error and (rid, digest) not in _PARSED]
    bodies: dict[int, dict] = {}  # type: ignore[type-arg]
    for start in range(0, len(missing), 2000):
        batch = missing[start : start + 2000]
        bodies.update(Resource.objects.filter(pk__in=batch).values_list("id", "obj"))
    for rid, kind, namespace, name, digest, error in heads:
        key = (kind, namespace, name)
        inventory.ids[key] = rid
        if error:
            inventory.invalid[key] = error
            continue
        parsed = _PARSED.get((rid, digest)) or _parse_cached(rid, digest, bodies[rid])
        if kind in MODEL_KINDS:
            inventory.models[key] = parsed  # type: ignore[assignment]
        elif kind in RUNTIME_KINDS:
            inventory.runtimes[key] = parsed  # type: ignore[assignment]
        else:
            inventory.isvcs[key] = parsed  # type: ignore[assignment]
    _LOADED[cluster.pk] = inventory
    return inventory
