"""A model's near misses with their fixes, each fix with what it would change in the whole
matrix (computed with the what-if), and the `kubectl patch` command that applies it.

The ranking and the fixes are OME knowledge (`matching.near_misses`, `matching.propose_fixes`);
this module reads the stored objects, runs the what-if of each fix and orders the fixes:
those that take a runtime from no other model first, then the fewest changes.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Any

import matching
from inventory.models import Cluster, Resource
from inventory.parsed import Inventory
from matching import Fix, NearMiss, ObjectKey, ObjectPatch

from .changes import RowChange, grouped_changes
from .services import readable_inventory, stored_in, whatif_inventory

MAX_WITH_FIXES = 6
"""Fixes are proposed for the closest near misses only."""
MAX_IMPACTS = 12
"""What-ifs per panel: the impact of the first fixes (closest misses first) is measured; later
ones say so and open in the what-if like the others. This bounds the panel's cost."""

_PLURALS = {
    "BaseModel": "basemodels.ome.io",
    "ClusterBaseModel": "clusterbasemodels.ome.io",
    "ServingRuntime": "servingruntimes.ome.io",
    "ClusterServingRuntime": "clusterservingruntimes.ome.io",
}


def kubectl_command(patch: ObjectPatch) -> str:
    """The exact `kubectl patch` command that applies one object's JSON patch."""
    kind, namespace, name = patch.target
    words = ["kubectl", "patch", _PLURALS[kind], name]
    if namespace:
        words += ["-n", namespace]
    words += ["--type", "json", "-p", json.dumps(list(patch.operations), separators=(",", ":"))]
    return shlex.join(words)


@dataclass(frozen=True)
class Impact:
    """What a fix changes in the matrix: the rows that change, grouped, and those of other models."""

    changes: list[RowChange]
    target: ObjectKey

    @property
    def others(self) -> list[RowChange]:
        """Changes to other models' rows."""
        return [change for change in self.changes if change.model != self.target]

    @property
    def takes_from_others(self) -> bool:
        """Whether another model would lose a runtime it matches, or switch from its pick
        (another model gaining a runtime takes nothing)."""
        return any(
            change.row.lost or (change.old_selected is not None and change.row.pick_changed) for change in self.others
        )

    def to_dict(self) -> dict[str, object]:
        return {"takes_from_others": self.takes_from_others, "changes": [change.to_dict() for change in self.changes]}


@dataclass(frozen=True)
class Proposal:
    """A verified fix, its commands and its impact (None when it was not measured)."""

    fix: Fix
    commands: list[str]
    impact: Impact | None

    @property
    def patches_json(self) -> str:
        return json.dumps([patch.to_dict() for patch in self.fix.patches], separators=(",", ":"))

    def to_dict(self) -> dict[str, object]:
        impact = None if self.impact is None else self.impact.to_dict()
        return {**self.fix.to_dict(), "kubectl": self.commands, "impact": impact}


@dataclass(frozen=True)
class RankedMiss:
    """A near miss, its runtime's resource, and its proposals (best first)."""

    miss: NearMiss
    runtime_id: int | None
    proposals: list[Proposal]
    evaluated: bool

    def to_dict(self) -> dict[str, object]:
        out = self.miss.to_dict()
        out["runtime"] = {**out["runtime"], "id": self.runtime_id}  # type: ignore[dict-item]
        out["fixes_evaluated"] = self.evaluated
        out["fixes"] = [proposal.to_dict() for proposal in self.proposals]
        return out


def patched_documents(objects: dict[ObjectKey, dict[str, Any]], fix: Fix) -> list[dict[str, Any]]:
    """The objects a fix changes, with the fix applied."""
    return [matching.json_patch(objects[patch.target], list(patch.operations)) for patch in fix.patches]


def _impact(inventory: Inventory, cluster: Cluster, documents: list[dict[str, Any]], model: ObjectKey) -> Impact:
    result = whatif_inventory(inventory, documents, cluster_name=cluster.name, stored=stored_in(cluster), explain=False)
    return Impact(grouped_changes(result, inventory.ids), model)


def _order(proposal: Proposal) -> tuple[object, ...]:
    """Measured before unmeasured; those that take a runtime from no other model first; then
    those that last (see Fix.caveats), the fewest other models changed, the fewest operations."""
    impact = proposal.impact
    operations = sum(len(patch.operations) for patch in proposal.fix.patches)
    lasting = not proposal.fix.caveats
    if impact is None:
        return (True, True, not lasting, 0, operations)
    return (False, impact.takes_from_others, not lasting, len(impact.others), operations)


def _proposals(
    inventory: Inventory,
    cluster: Cluster,
    objects: dict[ObjectKey, dict[str, Any]],
    keys: tuple[ObjectKey, ObjectKey],
    budget: list[int],
) -> list[Proposal]:
    """The verified fixes of one near miss with their impact while `budget` (what-ifs left
    for this panel) lasts."""
    model, runtime = keys
    try:
        fixes = matching.propose_fixes(objects[model], objects[runtime], inventory.behaviour)
    except matching.ManifestError:
        return []
    found = []
    for fix in fixes:
        impact = None
        if budget[0] > 0:
            budget[0] -= 1
            impact = _impact(inventory, cluster, patched_documents(objects, fix), model)
        found.append(Proposal(fix, [kubectl_command(patch) for patch in fix.patches], impact))
    return sorted(found, key=_order)


def model_near_misses(model: Resource, namespace: str, runtime: Resource | None = None) -> list[RankedMiss]:
    """The runtimes in scope of `namespace` that OME does not auto-select for the model,
    closest first, with fixes and their impact for the closest MAX_WITH_FIXES; only `runtime`
    when given. Empty for a malformed model."""
    cluster = model.cluster
    inventory = readable_inventory(cluster)
    parsed = inventory.models.get(model.key)
    if parsed is None:
        return []
    runtimes = (
        inventory.runtimes.values()
        if runtime is None
        else [inventory.runtimes[runtime.key]]
        if runtime.key in inventory.runtimes
        else []
    )
    misses = matching.near_misses(parsed, runtimes, namespace, inventory.behaviour)
    objects = _stored_objects(inventory, [model.key, *(miss.runtime for miss in misses[:MAX_WITH_FIXES])])
    ranked = []
    budget = [MAX_IMPACTS]
    for position, miss in enumerate(misses):
        evaluated = position < MAX_WITH_FIXES and miss.runtime in objects and model.key in objects
        keys = (model.key, miss.runtime)
        proposals = _proposals(inventory, cluster, objects, keys, budget) if evaluated else []
        ranked.append(RankedMiss(miss, inventory.ids.get(miss.runtime), proposals, evaluated))
    return ranked


def _stored_objects(inventory: Inventory, keys: list[ObjectKey]) -> dict[ObjectKey, dict[str, Any]]:
    """The stored bodies of the objects, by key."""
    ids = {inventory.ids[key]: key for key in keys if key in inventory.ids}
    return {ids[pk]: obj for pk, obj in Resource.objects.filter(pk__in=list(ids)).values_list("pk", "obj")}
