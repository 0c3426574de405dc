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
from matching import RENAMES, ObjectKey, Objects

from .fixes import Fix
from .groups import NO_SIZE_RANGE, FindingGroup
from .report import SEVERITIES

UNPROVEN = "the what-if could not prove this fix (an object it changes is missing or invalid once fixed)"


@dataclass(frozen=True)
class Move:
    """Rows of one model whose pick changes alike: from `old` to `new` (None: no runtime), and
    what that does to people (`effect`: matching.GAINS, LOSSES, RENAMES or MOVES)."""

    model: ObjectKey
    old: ObjectKey | None
    new: ObjectKey | None
    rows: int
    effect: str


# How each effect is said, harm first (losses, renames, moves, then gains), and its tone.
_SAID = {
    matching.LOSSES: ("lose their runtime", "bad"),
    matching.RENAMES: ("would be served under another model's name", "bad"),
    matching.MOVES: ("change runtime", "warn"),
    matching.GAINS: ("gain a runtime", "good"),
}
_ORDER = {effect: rank for rank, effect in enumerate(_SAID)}


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
    def harm(self) -> tuple[int, int, int]:
        """How many models it takes off their runtime, serves under another's name, moves."""
        return matching.harm(move.effect for move in self.moves)

    def of(self, effect: str) -> tuple[Move, ...]:
        """The moves with that effect (matching.GAINS, LOSSES, RENAMES or MOVES)."""
        return tuple(move for move in self.moves if move.effect == effect)

    @property
    def effects(self) -> list[tuple[int, str, str]]:
        """(models, what happens to them, tone) of each effect it has, harm first: the page's summary."""
        counts = [(len(self.of(effect)), said, tone) for effect, (said, tone) in _SAID.items()]
        return [item for item in counts if item[0]]

    @property
    def text(self) -> str:
        """The what-if's finding in words, the harm first."""
        if not self.moves:
            return f"the what-if: no model's pick changes ({self.rows_changed} row(s) change their cells)"
        by_path: dict[tuple[str, ObjectKey | None, ObjectKey | None], list[Move]] = {}
        for move in self.moves:
            by_path.setdefault((move.effect, move.old, move.new), []).append(move)
        parts = []
        ordered = sorted(by_path.items(), key=lambda item: (_ORDER[item[0][0]], -len(item[1]), _name(item[0][2])))
        for (effect, old, new), moves in ordered:
            rows = sum(move.rows for move in moves)
            said = "" if effect == matching.MOVES else f"{_SAID[effect][0]}: "
            parts.append(f"{len(moves)} model(s) ({rows} row(s)) {said}move from {_name(old)} to {_name(new)}")
        same = f"; {', '.join(key[2] for key in self.unranged)} has no modelSizeRange either" if self.unranged else ""
        return "the what-if: " + "; ".join(parts) + same

    def to_dict(self) -> dict[str, object]:
        return {
            "text": self.text,
            "rows_changed": self.rows_changed,
            "together_with": list(self.together),
            "harm": dict(zip(matching.HARMS, self.harm, strict=True)),
            "effects": {effect: [_move_dict(move) for move in self.of(effect)] for effect in matching.EFFECTS},
            "moves": [_move_dict(move) for move in self.moves],
        }


def _move_dict(move: Move) -> dict[str, object]:
    return {
        "model": matching.key_dict(move.model),
        "from": matching.key_dict(move.old),
        "to": matching.key_dict(move.new),
        "rows": move.rows,
        "effect": move.effect,
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
    after = _objects(inventory, changed)
    result = matching.diff(base or _objects(inventory), after)
    moves: dict[tuple[ObjectKey, ObjectKey | None, ObjectKey | None], int] = {}
    for row in result.rows:
        if row.old_pick != row.new_pick:
            path = (row.model, row.old_pick, row.new_pick)
            moves[path] = moves.get(path, 0) + row.stands_for
    found, off_own = [], []
    for (model_key, old_key, new_key), rows in sorted(moves.items(), key=str):
        model = after.models[model_key]
        old = None if old_key is None else inventory.runtimes[old_key]
        new = None if new_key is None else after.runtimes[new_key]
        found.append(Move(model_key, old_key, new_key, rows, matching.pick_effect(model, old, new)))
        if matching.leaves_own(model, old, new):
            off_own.append(found[-1])
    destinations = tuple(sorted({move.new for move in found if move.new is not None}))
    unranged = tuple(
        key for key in destinations if key in inventory.runtimes and inventory.runtimes[key].size_range is None
    )
    return Proof(
        tuple(found), result.rows_changed, destinations=destinations, unranged=unranged, off_own=tuple(off_own)
    )


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
    return ranked(result)


def ranked(groups: list[FindingGroup]) -> list[FindingGroup]:
    """The proven groups, each severity's by what their fix does to people: the fewest losses,
    then renames, then moves (matching.harm; a gain is no harm, nor is a group without a fix),
    then the most findings, then the smallest fix."""

    def order(group: FindingGroup) -> tuple[object, ...]:
        proof, size = group.proof if group.fix is not None else None, 0 if group.fix is None else group.fix.size
        return (SEVERITIES.index(group.severity), (0, 0, 0) if proof is None else proof.harm, -group.count, size)

    return sorted(groups, key=order)


def _only_proven(group: FindingGroup) -> FindingGroup:
    """The group without the fixes the what-if could not prove (an object missing, or no longer
    valid once fixed), nor those that take a model off a runtime dedicated to it or have a
    runtime dedicated to another model serve it (under that model's name): a fix is offered
    only with its proof, and only when it is sound for every model it moves."""
    if group.fix is not None and (group.proof is None or _unsound(group.proof)):
        no_fix = UNPROVEN if group.proof is None else _unsound(group.proof)
        return replace(
            group, fix=None, pair=None, partner=None, alternative=None, alternative_proof=None, no_fix=no_fix
        )
    if group.pair is not None and _unsound(group.pair):
        group = replace(group, pair=None, partner=None)
    if group.alternative is not None and (group.alternative_proof is None or _unsound(group.alternative_proof)):
        return replace(group, alternative=None, alternative_proof=None)
    return group


def _unsound(proof: Proof) -> str:
    """Why no fix is offered with this proof; "" when none of its moves is unsound."""
    said: dict[str, list[str]] = {}
    for move in proof.off_own:
        said.setdefault(f"off {_name(move.old)}, the runtime dedicated to them", []).append(move.model[2])
    for move in proof.of(RENAMES):
        said.setdefault(f"onto {_name(move.new)}, dedicated to another model", []).append(move.model[2])
    found = [f"{', '.join(models)} {where}" for where, models in said.items()]
    return f"no fix is offered: the what-if moves {'; '.join(found)}" if found else ""


def _same_problem(group: FindingGroup, proof: Proof | None) -> Proof | None:
    """A no-range winner's proof names destinations without a range; others' do not."""
    if proof is None or group.cause == NO_SIZE_RANGE:
        return proof
    return replace(proof, unranged=())


# Stored proofs (lint.models.LintProofs): by group key, what proven_groups found, as JSON.
STORED_FORMAT = "moves with effects"
"""Part of `proofs_key`: proofs stored in an older shape are proven anew, not read back."""


def proofs_key(fingerprint: str, groups: Iterable[FindingGroup]) -> str:
    """What stored proofs are filed under: the inventory's fingerprint and a digest of the
    lint's fixes, so that proofs are read back only for the very fixes they were made for (a
    release whose lint proposes other fixes for the same inventory proves them anew)."""
    fixes: list[object] = [
        [group.key, *(None if fix is None else fix.to_dict() for fix in (group.fix, group.alternative))]
        for group in groups
    ]
    fixes.append(STORED_FORMAT)
    digest = hashlib.sha256(json.dumps(fixes, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return f"{fingerprint}/fixes:{digest}"


def proofs_json(groups: Iterable[FindingGroup]) -> dict[str, dict[str, Any]]:
    """What proven_groups found for each group whose fix it proved (offered or withheld), as
    JSON (`with_proofs` reads it back)."""
    return {
        group.key: {
            "proof": _proof_json(group.proof),
            "pair": None if group.pair is None else _proof_json(group.pair),
            "alternative": _proof_json(group.alternative_proof),
        }
        for group in groups
        if group.proof is not None
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
    return ranked(result)


def _proof_json(proof: Proof | None) -> dict[str, Any] | None:
    if proof is None:
        return None
    return {
        "moves": [[move.model, move.old, move.new, move.rows, move.effect] for move in proof.moves],
        "rows_changed": proof.rows_changed,
        "together": list(proof.together),
        "destinations": list(proof.destinations),
        "unranged": list(proof.unranged),
        "off_own": [[move.model, move.old, move.new, move.rows, move.effect] for move in proof.off_own],
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
        off_own=tuple(_move_of(item) for item in data["off_own"]),
    )


def _move_of(item: list[Any]) -> Move:
    model, old, new, rows, effect = item
    return Move(_key(model), _key_or_none(old), _key_or_none(new), rows, effect)
