"""A model's near misses with their fixes, each fix with what it would change in the whole
matrix (computed with the what-if), and the `kubectl` command that applies it.

The near misses and the fixes are OME knowledge (`matching.near_misses`,
`matching.propose_fixes`, `matching.derived_runtime`); this module reads the stored objects,
runs the what-if of each fix and ranks all fixes, across runtimes, in one order: those that
change no other model's pick first, then the fewest other cells and models changed, then the
closest runtime, then the smallest fix. When no runtime accepts the model's recorded facts, it
says so and proposes a new runtime derived from the closest one.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

import matching
from access.scope import Scope
from core.cache import VersionedCache
from inventory.models import Cluster, Resource
from inventory.parsed import Inventory, inventory_for
from inventory.selectors import resources_visible
from matching import Fix, NearMiss, ObjectKey, ObjectPatch

from .changes import RowChange, grouped_changes
from .diff import Rows
from .services import stored_in, whatif_inventory

MAX_WITH_FIXES = 6
"""Fixes are proposed for the closest near misses only."""
# (model id, namespace, runtime id, reader's rights) -> near misses at an inventory fingerprint.
_NEAR_MISSES: VersionedCache[str, NearFixes] = VersionedCache("near_misses")
MAX_IMPACTS = 12
"""What-ifs per panel: the impact of the first fixes (closest misses first) is measured; later
ones say so and open in the what-if like the others. This bounds the panel's cost."""

_PLURALS = {
    "BaseModel": "basemodels.ome.io",
    "ClusterBaseModel": "clusterbasemodels.ome.io",
    "ServingRuntime": "servingruntimes.ome.io",
    "ClusterServingRuntime": "clusterservingruntimes.ome.io",
}


def kubectl_apply(manifest: dict[str, Any]) -> str:
    """The exact `kubectl apply` command that creates a manifest, with the manifest inline."""
    text = yaml.safe_dump(manifest, sort_keys=False)
    return f"kubectl apply -f - <<'EOF'\n{text}EOF"


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
    """What a fix changes in the matrix: the rows that change, grouped, and those of other
    models; `effects` what each change does to people (matching.pick_effect, aligned with
    `changes`; None for a change of cells only). A model served by a runtime dedicated to
    another model is a rename, whichever model it is; the other effects count other models."""

    changes: list[RowChange]
    target: ObjectKey
    effects: tuple[str | None, ...] = ()

    @property
    def others(self) -> list[RowChange]:
        """Changes to other models' rows."""
        return [change for change in self.changes if change.model != self.target]

    def _of(self, kind: str) -> list[RowChange]:
        return [
            change
            for change, effect in zip(self.changes, self.effects, strict=True)
            if effect == kind and (kind == matching.RENAMES or change.model != self.target)
        ]

    @property
    def gains(self) -> list[RowChange]:
        """Other models that had no runtime and get one: a benefit, not a harm."""
        return self._of(matching.GAINS)

    @property
    def losses(self) -> list[RowChange]:
        """Other models that lose their runtime."""
        return self._of(matching.LOSSES)

    @property
    def moves(self) -> list[RowChange]:
        """Other models that switch from one runtime to another."""
        return self._of(matching.MOVES)

    @property
    def renames(self) -> list[RowChange]:
        """Models (this one included) that would be served under another model's name."""
        return self._of(matching.RENAMES)

    @property
    def harm(self) -> tuple[int, int, int]:
        """What the fix does to people, worst first: losses, renames, moves."""
        return (len(self.losses), len(self.renames), len(self.moves))

    @property
    def cells_of_others(self) -> int:
        """How many cells of other models change, counting each namespace."""
        return sum(len(change.row.cells) * len(change.namespaces) for change in self.others)

    def pick_of_target(self) -> ObjectKey | None:
        """The runtime OME would pick for the model after the fix (its first changed row)."""
        return next((change.new_selected for change in self.changes if change.model == self.target), None)

    def to_dict(self) -> dict[str, object]:
        return {
            **{name: [change.to_dict() for change in getattr(self, name)] for name in matching.EFFECTS},
            "changes": [change.to_dict() for change in self.changes],
        }


@dataclass(frozen=True)
class Proposal:
    """A verified fix of the near miss `distance` checks away, its commands and its impact
    (None when it was not measured)."""

    fix: Fix
    commands: list[str]
    impact: Impact | None
    distance: int = 0
    runtime_id: int | None = None

    @property
    def patches_json(self) -> str:
        return json.dumps([patch.to_dict() for patch in self.fix.patches], separators=(",", ":"))

    @property
    def picked_instead(self) -> ObjectKey | None:
        """The runtime OME would pick for the model after the fix when it is not the one the fix
        is listed under (which then matches, but ranks below it)."""
        picked = None if self.impact is None else self.impact.pick_of_target()
        return picked if picked is not None and picked != self.fix.runtime else None

    def to_dict(self) -> dict[str, object]:
        impact = None if self.impact is None else self.impact.to_dict()
        return {
            **self.fix.to_dict(),
            "runtime": matching.key_dict(self.fix.runtime),
            "distance": self.distance,
            "kubectl": self.commands,
            "impact": impact,
        }


@dataclass(frozen=True)
class RankedMiss:
    """A near miss, its runtime's resource, and its proposals (best first)."""

    miss: NearMiss
    runtime_id: int | None
    proposals: list[Proposal]
    evaluated: bool
    dedicated: str = ""
    """Why the runtime serves another model (then no fix is offered on it); "" otherwise."""
    withheld: tuple[str, ...] = ()
    """The fixes not offered because they would serve a model under another model's name."""

    def to_dict(self) -> dict[str, object]:
        out = self.miss.to_dict()
        out["runtime"] = {**out["runtime"], "id": self.runtime_id}  # type: ignore[dict-item]
        out["fixes_evaluated"] = self.evaluated
        out["dedicated_to_another_model"] = self.dedicated or None
        out["withheld_fixes"] = list(self.withheld)
        out["fixes"] = [proposal.to_dict() for proposal in self.proposals]
        return out


@dataclass(frozen=True)
class NearFixes:
    """A model's near misses (closest first), all their fixes in one ranking (best first),
    and the recorded fact no runtime accepts, when none does."""

    misses: list[RankedMiss]
    ranked: list[Proposal] = field(default_factory=list)
    unserved: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {
            "unserved": self.unserved,
            "fixes": [proposal.to_dict() for proposal in self.ranked],
            "near_misses": [miss.to_dict() for miss in self.misses],
        }


def patched_documents(objects: dict[ObjectKey, dict[str, Any]], fix: Fix) -> list[dict[str, Any]]:
    """The objects a fix changes, with the fix applied, and those it creates."""
    changed = [matching.json_patch(objects[patch.target], list(patch.operations)) for patch in fix.patches]
    return [*changed, *fix.created]


@dataclass(frozen=True)
class _Panel:
    """What the what-ifs of one model's panel share: the reader's inventory and rights, the
    stored objects read once, and the rows of the unchanged inventory, computed once."""

    inventory: Inventory
    cluster: Cluster
    objects: dict[ObjectKey, dict[str, Any]]
    model: ObjectKey
    scope: Scope
    old_rows: Rows = field(default_factory=dict)

    def stored(self, obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The stored version of a fix's object: read already for an object the fix changes,
        looked up as `stored_in` does for one it creates."""
        metadata = obj.get("metadata")
        if isinstance(metadata, Mapping):
            key = (obj.get("kind"), metadata.get("namespace") or "", metadata.get("name"))
            if key in self.objects:
                return self.objects[key]
        return stored_in(self.cluster, scope=self.scope)(obj)


def _impact(panel: _Panel, documents: list[dict[str, Any]]) -> Impact:
    changed = _runtimes_of(documents)
    result = whatif_inventory(
        panel.inventory,
        documents,
        cluster_name=panel.cluster.name,
        stored=panel.stored,
        explain=False,
        whole=panel.scope.reads_whole(panel.cluster.name),
        old_rows=panel.old_rows,
    )
    changes = grouped_changes(result, panel.inventory.ids)
    runtimes = {**panel.inventory.runtimes, **changed}
    return Impact(changes, panel.model, tuple(_effect(panel.inventory, runtimes, change) for change in changes))


def _runtimes_of(documents: list[dict[str, Any]]) -> dict[ObjectKey, matching.Runtime]:
    """The runtimes a fix changes or creates, as they would be."""
    found = {}
    for document in documents:
        try:
            runtime = matching.parse_runtime(document)
        except matching.ManifestError:
            continue  # a model, or a runtime the what-if reports as invalid
        found[runtime.key] = runtime
    return found


def _effect(inventory: Inventory, runtimes: Mapping[ObjectKey, matching.Runtime], change: RowChange) -> str | None:
    """What the change does to people (matching.pick_effect), with the runtimes as the fix
    leaves them; None when the pick stays."""
    model = inventory.models.get(change.model)
    if model is None or not change.row.pick_changed:
        return None
    old, new = (None if key is None else runtimes.get(key) for key in (change.old_selected, change.new_selected))
    return matching.pick_effect(model, old, new)


def _order(proposal: Proposal) -> tuple[object, ...]:
    """One ranking across runtimes, by what happens to people: measured before unmeasured;
    then harm (the fewest losses, then renames, then moves of other models); then the closest
    runtime, the fewest arguments to review, the fewest other cells changed, the smallest fix.
    Another model gaining a runtime is no harm."""
    impact, fix = proposal.impact, proposal.fix
    if impact is None:
        return (True, (0, 0, 0), proposal.distance, len(fix.review), 0, fix.size)
    return (False, impact.harm, proposal.distance, len(fix.review), impact.cells_of_others, fix.size)


def _proposals(panel: _Panel, miss: NearMiss, budget: list[int]) -> tuple[list[Proposal], tuple[str, ...]]:
    """The verified fixes of one near miss with their impact while `budget` (what-ifs left
    for this panel) lasts, best first; and why those withheld are (they would serve a model
    under another model's name)."""
    objects = panel.objects
    try:
        fixes = matching.propose_fixes(objects[panel.model], objects[miss.runtime], panel.inventory.behaviour)
    except matching.ManifestError:
        return [], ()
    found = [_measured(panel, fix, miss, budget) for fix in fixes]
    withheld = tuple(text for proposal in found if (text := renaming(proposal)))
    return sorted((proposal for proposal in found if not renaming(proposal)), key=_order), withheld


def renaming(proposal: Proposal) -> str:
    """Why the fix is withheld: the models it would have served under another model's name
    (by a runtime dedicated to that model); "" when none."""
    renames = [] if proposal.impact is None else proposal.impact.renames
    served = ", ".join(f"{change.model[2]} by {(change.new_selected or ('', '', ''))[2]}" for change in renames)
    return f"{'; '.join(proposal.fix.changes)}: would serve {served}, under another model's name" if served else ""


def _measured(panel: _Panel, fix: Fix, miss: NearMiss, budget: list[int]) -> Proposal:
    """The fix with its commands, and its impact while `budget` lasts."""
    impact = None
    if budget[0] > 0:
        budget[0] -= 1
        impact = _impact(panel, patched_documents(panel.objects, fix))
    commands = [kubectl_command(patch) for patch in fix.patches] + [kubectl_apply(doc) for doc in fix.created]
    return Proposal(fix, commands, impact, miss.distance, panel.inventory.ids.get(fix.runtime))


def _free_name(inventory: Inventory, source: ObjectKey, model_name: str) -> str:
    """A name for a runtime derived from `source` for the model: the source's first word and
    the model's name (`srt-gemma-2b`), numbered when taken."""
    base = f"{source[2].split('-')[0]}-{model_name}"[:60]
    taken = {key[2] for key in inventory.runtimes if key[0] == source[0] and key[1] == source[1]}
    return next(name for name in (base, *(f"{base}-{n}" for n in range(2, 100))) if name not in taken)


def _derived(panel: _Panel, misses: tuple[NearMiss, ...]) -> Proposal | None:
    """A new runtime derived from the closest runtime that has entries, preferring one with the
    fewest model-specific settings to review (a generic runtime has none), measured by the what-if."""
    model = panel.model
    sources = [(_to_review(panel.inventory, miss.runtime), position, miss) for position, miss in enumerate(misses)]
    candidates = sorted((item for item in sources if item[2].entry is not None), key=lambda item: item[:2])
    if not candidates or model not in panel.objects:
        return None
    source = candidates[0][2]
    objects = {**panel.objects, **_stored_objects(panel.inventory, panel.scope, [source.runtime])}
    if source.runtime not in objects:
        return None
    name = _free_name(panel.inventory, source.runtime, model[2])
    try:
        fix = matching.derived_runtime(objects[model], objects[source.runtime], name, panel.inventory.behaviour)
    except matching.ManifestError:
        return None
    return None if fix is None else _measured(panel, fix, source, [1])


def _to_review(inventory: Inventory, key: ObjectKey) -> int:
    """How many model-specific settings a runtime derived from `key` would keep for review."""
    runtime = inventory.runtimes.get(key)
    found = None if runtime is None else runtime.dedication
    return 0 if found is None else len(found.settings)


def model_near_misses(model: Resource, namespace: str, runtime: Resource | None = None, *, scope: Scope) -> NearFixes:
    """_near_misses, made once per inventory version for each model, namespace, runtime and
    reader's rights: each costs a dozen what-ifs (~0.4 s for a 2,000 x 300 cluster), and the
    model page asks for it on every load."""
    owner = (model.pk, namespace, None if runtime is None else runtime.pk, scope.fingerprint())
    version = inventory_for(model.cluster, scope=scope).fingerprint
    return _NEAR_MISSES.get(owner, version, lambda _stale: _near_misses(model, namespace, runtime, scope=scope))


def _near_misses(model: Resource, namespace: str, runtime: Resource | None, *, scope: Scope) -> NearFixes:
    """The runtimes in scope of `namespace` that OME does not auto-select for the model,
    closest first, with fixes and their impact for the closest MAX_WITH_FIXES; only `runtime`
    when given; and all the fixes in one ranking. When no runtime in scope accepts the model's
    recorded facts, which one (`unserved`) and a new runtime among the fixes. Empty for a
    malformed model."""
    cluster = model.cluster
    inventory = inventory_for(cluster, scope=scope)
    parsed = inventory.models.get(model.key)
    if parsed is None:
        return NearFixes([])
    runtimes = (
        inventory.runtimes.values()
        if runtime is None
        else [inventory.runtimes[runtime.key]]
        if runtime.key in inventory.runtimes
        else []
    )
    misses = matching.near_misses(parsed, runtimes, namespace, inventory.behaviour)
    objects = _stored_objects(inventory, scope, [model.key, *(miss.runtime for miss in misses[:MAX_WITH_FIXES])])
    panel = _Panel(inventory, cluster, objects, model.key, scope)
    ranked = []
    budget = [MAX_IMPACTS]
    for position, miss in enumerate(misses):
        evaluated = position < MAX_WITH_FIXES and miss.runtime in objects and model.key in objects
        proposals, withheld = _proposals(panel, miss, budget) if evaluated else ([], ())
        dedicated = _dedicated_to_other(inventory.runtimes.get(miss.runtime), parsed)
        ranked.append(RankedMiss(miss, inventory.ids.get(miss.runtime), proposals, evaluated, dedicated, withheld))
    proposals = [proposal for item in ranked for proposal in item.proposals]
    in_scope = [item for item in inventory.runtimes.values() if item.is_cluster or item.namespace == namespace]
    unserved = None if runtime is not None else matching.unserved_fact(parsed, in_scope)
    if unserved is not None:
        derived = _derived(panel, misses)
        proposals += [] if derived is None or renaming(derived) else [derived]
    return NearFixes(ranked, sorted(proposals, key=_order), unserved)


def _dedicated_to_other(runtime: matching.Runtime | None, model: matching.Model) -> str:
    if runtime is None or runtime.dedication is None or not runtime.serves_as_other(model):
        return ""
    return runtime.dedication.describe()


def _stored_objects(inventory: Inventory, scope: Scope, keys: list[ObjectKey]) -> dict[ObjectKey, dict[str, Any]]:
    """The stored bodies of the objects, by key."""
    ids = {inventory.ids[key]: key for key in keys if key in inventory.ids}
    found = resources_visible(scope).filter(pk__in=list(ids)).values_list("pk", "obj")
    return {ids[pk]: obj for pk, obj in found}
