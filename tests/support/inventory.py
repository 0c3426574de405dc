"""Inventories of manifests held in memory, for tests that need no database."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import matching
from inventory.models import CLUSTER_SCOPED
from inventory.parsed import Inventory
from whatif.parse import normalise


def inventory_from_objects(
    objects: Iterable[Mapping[str, Any]], *, cluster_id: int = 0, behaviour: str = matching.DEFAULT_BEHAVIOUR
) -> Inventory:
    """An Inventory of manifests (normalised like loaded ones), with ids 1, 2, … in input
    order, judged by `behaviour`; malformed objects are recorded as invalid."""
    inventory = Inventory(
        cluster_id=cluster_id, fingerprint=f"objects:{id(objects)}", behaviour=matching.as_behaviour(behaviour)
    )
    for number, raw in enumerate(objects, start=1):
        obj = normalise(raw)
        kind = obj.get("kind")
        metadata = obj.get("metadata")
        if not isinstance(metadata, Mapping):
            metadata = {}
        name = str(metadata.get("name") or "")
        namespace = "" if kind in CLUSTER_SCOPED else str(metadata.get("namespace") or "")
        key = (str(kind), namespace, name)
        inventory.ids[key] = number
        try:
            inventory.put(key, matching.parse_object(obj))
        except matching.ManifestError as error:
            inventory.invalid[key] = f"{error.field}: {error.problem}"
    return inventory
