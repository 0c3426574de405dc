"""What a change of OME's pick does to the people who use a model, worst first: a loss (the
model has no runtime any more), a rename (the new runtime is dedicated to another model, so
clients would reach this model under that model's served name, dedicated.py), a move (another
runtime) or a gain (a model that had none gets one, which is a benefit, not a harm).

The near-miss fixes (whatif.fixes) and lint's fixes (lint.rules.proofs) sort their effects
with these words, and rank by `harm`: the fewest losses, then renames, then moves.
"""

from __future__ import annotations

from collections.abc import Iterable

from .types import Model, Runtime

GAINS, LOSSES, RENAMES, MOVES = "gains", "losses", "renames", "moves"
EFFECTS = (GAINS, LOSSES, RENAMES, MOVES)
"""The kinds of effect, in the order pages and APIs list them."""
HARMS = (LOSSES, RENAMES, MOVES)
"""The kinds that harm, worst first."""


def pick_effect(model: Model, old: Runtime | None, new: Runtime | None) -> str:
    """The effect of OME's pick for the model changing from `old` to `new` (None: no runtime)."""
    if new is None:
        return LOSSES
    if new.serves_as_other(model):
        return RENAMES
    return GAINS if old is None else MOVES


def is_own(runtime: Runtime | None, model: Model) -> bool:
    """Whether the runtime is dedicated to the model itself (its container serves it by name)."""
    return runtime is not None and runtime.dedication is not None and not runtime.serves_as_other(model)


def leaves_own(model: Model, old: Runtime | None, new: Runtime | None) -> bool:
    """Whether the change takes the model off a runtime dedicated to it, to one that is not."""
    return is_own(old, model) and not is_own(new, model)


def harm(effects: Iterable[str]) -> tuple[int, int, int]:
    """How many of the effects are losses, renames and moves: compare with `<`, less is better."""
    found = list(effects)
    losses, renames, moves = (found.count(kind) for kind in HARMS)
    return (losses, renames, moves)
