"""Lint fixes proven before they are shown: each group's fix is run through the what-if
(`matching.diff` of the inventory with and without the fix), and what is said about it is
what the what-if found: who moves where. A fix that moves models to a runtime that has the same
problem is proven again together with that runtime's fix, and the pair is shown together.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import matching
from inventory.parsed import Inventory
from matching import ObjectKey, Objects

from .fixes import Fix
from .groups import NO_SIZE_RANGE, FindingGroup

UNPROVEN = "the what-if could not prove this fix (an object it changes is missing or invalid once fixed)"


@dataclass(frozen=True)
class Move:
    """Rows of one model whose pick changes alike: from `old` to `new` (None: no runtime)."""

    model: ObjectKey
    old: ObjectKey | None
    new: ObjectKey | None
    rows: int


@dataclass(frozen=True)
class Proof:
    """What the what-if found for a fix: the moves, how many rows change at all, and the keys
    of the groups whose fixes it was proven together with (`together`)."""

    moves: tuple[Move, ...]
    rows_changed: int
    together: tuple[str, ...] = ()
    destinations: tuple[ObjectKey, ...] = field(default=(), compare=False)
    unranged: tuple[ObjectKey, ...] = field(default=(), compare=False)
    """The destinations without a modelSizeRange: the same problem as a no-range winner's."""
    off_own: tuple[Move, ...] = field(default=(), compare=False)
    """The moves that take a model off a runtime dedicated to it (matching.Dedication)."""

    @property
    def text(self) -> str:
        """The what-if's finding in words."""
        if not self.moves:
            return f"the what-if: no model's pick changes ({self.rows_changed} row(s) change their cells)"
        by_path: dict[tuple[ObjectKey | None, ObjectKey | None], list[Move]] = {}
        for move in self.moves:
            by_path.setdefault((move.old, move.new), []).append(move)
        parts = []
        for (old, new), moves in sorted(by_path.items(), key=lambda item: (-len(item[1]), _name(item[0][1]))):
            rows = sum(move.rows for move in moves)
            parts.append(f"{len(moves)} model(s) ({rows} row(s)) move from {_name(old)} to {_name(new)}")
        same = f"; {', '.join(key[2] for key in self.unranged)} has no modelSizeRange either" if self.unranged else ""
        return "the what-if: " + "; ".join(parts) + same

    def to_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "rows_changed": self.rows_changed,
            "together_with": list(self.together),
            "moves": [
                {
                    "model": matching.key_dict(move.model),
                    "from": matching.key_dict(move.old),
                    "to": matching.key_dict(move.new),
                    "rows": move.rows,
                }
                for move in self.moves
            ],
        }


def _name(key: ObjectKey | None) -> str:
    return "no runtime" if key is None else key[2]


def _objects(inventory: Inventory, changed: Mapping[ObjectKey, Any] | None = None) -> Objects:
    models, runtimes = dict(inventory.models), dict(inventory.runtimes)
    for key, value in (changed or {}).items():
        (runtimes if key[0].endswith("ServingRuntime") else models)[key] = value
    return Objects(models=models, runtimes=runtimes, isvcs=inventory.isvcs, behaviour=inventory.behaviour)


def prove(
    inventory: Inventory, raw: Mapping[ObjectKey, Mapping[str, Any]], fixes: Iterable[Fix], base: Objects | None = None
) -> Proof | None:
    """The what-if of the fixes applied together to the stored objects `raw` (`base`: the
    inventory as Objects, when already built); None when an object is missing or a fixed
    object no longer parses."""
    changed: dict[ObjectKey, Any] = {}
    for fix in fixes:
        for key in fix.changed:
            if key not in raw:
                return None
            try:
                changed[key] = matching.parse_object(matching.as_applied(fix.apply_to(key, raw[key])))
            except matching.ManifestError:
                return None
    result = matching.diff(base or _objects(inventory), _objects(inventory, changed))
    moves: dict[tuple[ObjectKey, ObjectKey | None, ObjectKey | None], int] = {}
    for row in result.rows:
        if row.old_pick != row.new_pick:
            path = (row.model, row.old_pick, row.new_pick)
            moves[path] = moves.get(path, 0) + row.stands_for
    found = tuple(Move(model, old, new, rows) for (model, old, new), rows in sorted(moves.items(), key=str))
    destinations = tuple(sorted({move.new for move in found if move.new is not None}))
    unranged = tuple(
        key for key in destinations if key in inventory.runtimes and inventory.runtimes[key].size_range is None
    )
    off_own = tuple(move for move in found if _leaves_own(inventory, move))
    return Proof(found, result.rows_changed, destinations=destinations, unranged=unranged, off_own=off_own)


def _leaves_own(inventory: Inventory, move: Move) -> bool:
    """Whether the move takes its model off a runtime dedicated to it."""
    old, model = inventory.runtimes.get(move.old) if move.old else None, inventory.models.get(move.model)
    return old is not None and model is not None and old.dedication is not None and not old.serves_as_other(model)


def proven_groups(
    groups: list[FindingGroup], inventory: Inventory, raw: Mapping[ObjectKey, Mapping[str, Any]]
) -> list[FindingGroup]:
    """The groups with their fixes proven; a fix whose moves land on the runtime of another
    group (which has a problem of its own, often the same one) is proven again together with
    that group's fix: the fixes interact, and both groups show the pair."""
    base = _objects(inventory)
    proofs = {
        group.key: _same_problem(group, prove(inventory, raw, [group.fix], base))
        for group in groups
        if group.fix is not None
    }
    by_runtime = {group.runtimes[0]: group for group in groups if group.fix is not None}
    paired: dict[str, tuple[FindingGroup, Proof]] = {}
    for group in groups:
        proof = proofs.get(group.key)
        if proof is None or group.fix is None:
            continue
        partner = next((by_runtime[key] for key in proof.destinations if key in by_runtime), None)
        if partner is None or partner.key == group.key or partner.fix is None:
            continue
        pair = _same_problem(group, prove(inventory, raw, [group.fix, partner.fix], base))
        if pair is not None:
            paired[group.key] = (partner, replace(pair, together=(partner.key,)))
            paired.setdefault(partner.key, (group, replace(pair, together=(group.key,))))
    result = []
    for group in groups:
        proof = proofs.get(group.key)
        partner, pair = paired.get(group.key, (None, None))
        other = None if group.alternative is None else prove(inventory, raw, [group.alternative], base)
        result.append(
            _only_proven(
                replace(
                    group,
                    proof=proof,
                    pair=pair,
                    partner=None if partner is None else partner.fix,
                    alternative_proof=other,
                )
            )
        )
    return result


def _only_proven(group: FindingGroup) -> FindingGroup:
    """The group without the fixes the what-if could not prove (an object missing, or no longer
    valid once fixed), nor those that take a model off a runtime dedicated to it: a fix is
    offered only with its proof."""
    if group.fix is not None and (group.proof is None or group.proof.off_own):
        no_fix = UNPROVEN if group.proof is None else _off_own_text(group.proof)
        return replace(
            group, fix=None, pair=None, partner=None, alternative=None, alternative_proof=None, no_fix=no_fix
        )
    if group.pair is not None and group.pair.off_own:
        group = replace(group, pair=None, partner=None)
    if group.alternative is not None and (group.alternative_proof is None or group.alternative_proof.off_own):
        return replace(group, alternative=None, alternative_proof=None)
    return group


def _off_own_text(proof: Proof) -> str:
    moved = "; ".join(f"{move.model[2]} off {_name(move.old)}" for move in proof.off_own)
    return f"the fix would move models off the runtime dedicated to them ({moved}): no fix is offered"


def _same_problem(group: FindingGroup, proof: Proof | None) -> Proof | None:
    """A no-range winner's proof names destinations without a range; others' do not."""
    if proof is None or group.cause == NO_SIZE_RANGE:
        return proof
    return replace(proof, unranged=())


# Stored proofs (lint.models.LintProofs): by group key, what proven_groups found, as JSON.


def proofs_key(fingerprint: str, groups: Iterable[FindingGroup]) -> str:
    """What stored proofs are filed under: the inventory's fingerprint and a digest of the
    lint's fixes, so that proofs are read back only for the very fixes they were made for (a
    release whose lint proposes other fixes for the same inventory proves them anew)."""
    fixes = [
        [group.key, *(None if fix is None else fix.to_dict() for fix in (group.fix, group.alternative))]
        for group in groups
    ]
    digest = hashlib.sha256(json.dumps(fixes, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"{fingerprint}/fixes:{digest}"


def proofs_json(groups: Iterable[FindingGroup]) -> dict[str, dict[str, Any]]:
    """What proven_groups found for each group with a fix, as JSON (`with_proofs` reads it back)."""
    return {
        group.key: {
            "proof": _proof_json(group.proof),
            "pair": None if group.pair is None else _proof_json(group.pair),
            "alternative": _proof_json(group.alternative_proof),
        }
        for group in groups
        if group.fix is not None
    }


def with_proofs(groups: list[FindingGroup], stored: Mapping[str, Mapping[str, Any]]) -> list[FindingGroup]:
    """The groups as proven_groups made them, from `proofs_json` of the same inventory's groups.
    A group's partner is the fix of the group its pair was proven together with; a fix without
    a stored proof is left out as proven_groups leaves it out."""
    fixes = {group.key: group.fix for group in groups}
    result = []
    for group in groups:
        found = stored.get(group.key)
        if group.fix is None:
            result.append(group)
            continue
        if found is None:
            result.append(_only_proven(group))
            continue
        pair = _proof_of(found["pair"])
        proven = replace(
            group,
            proof=_proof_of(found["proof"]),
            pair=pair,
            partner=None if pair is None else fixes.get(pair.together[0]),
            alternative_proof=_proof_of(found["alternative"]),
        )
        result.append(_only_proven(proven))
    return result


def _proof_json(proof: Proof | None) -> dict[str, Any] | None:
    if proof is None:
        return None
    return {
        "moves": [[move.model, move.old, move.new, move.rows] for move in proof.moves],
        "rows_changed": proof.rows_changed,
        "together": list(proof.together),
        "destinations": list(proof.destinations),
        "unranged": list(proof.unranged),
        "off_own": [[move.model, move.old, move.new, move.rows] for move in proof.off_own],
    }


def _key(value: list[str]) -> ObjectKey:
    return (value[0], value[1], value[2])


def _key_or_none(value: list[str] | None) -> ObjectKey | None:
    return None if value is None else _key(value)


def _proof_of(data: Mapping[str, Any] | None) -> Proof | None:
    if data is None:
        return None
    return Proof(
        moves=tuple(_move_of(item) for item in data["moves"]),
        rows_changed=data["rows_changed"],
        together=tuple(data["together"]),
        destinations=tuple(map(_key, data["destinations"])),
        unranged=tuple(map(_key, data["unranged"])),
        off_own=tuple(_move_of(item) for item in data.get("off_own", ())),
    )


def _move_of(item: list[Any]) -> Move:
    model, old, new, rows = item
    return Move(_key(model), _key_or_none(old), _key_or_none(new), rows)
