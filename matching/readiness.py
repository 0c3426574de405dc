"""Whether newer OME waits for a Sharded model before it looks for a runtime (U3w).

The controller resolves the model, then, for a Sharded one, runs ShardedBaseModelReady before
any runtime lookup; until the model is ready it records a Normal event ModelNotReady and
checks again after 5 s (ome-projects/ome `pkg/controller/v1beta1/inferenceservice/controller.go`
at 0df64b72, `utils/reconciliation.go` at 485b7933).
"""

from __future__ import annotations

from . import reasons
from .behaviour import Behaviour
from .rules import SHARDED
from .types import Model


def sharded_wait(model: Model, behaviour: Behaviour) -> str | None:
    """The ModelNotReady message while this OME waits for the model, or None when it goes on.

    OME goes on when the model is not Sharded, or its Ready condition is True for the
    model's current generation.
    """
    if model.distribution != SHARDED or not behaviour.has("U3w"):
        return None
    ready = model.ready
    if ready is None:
        return reasons.READY_CONDITION_MISSING
    if ready.status != "True":
        return ready.message or reasons.SHARDED_NOT_READY
    if ready.observed_generation != model.generation:
        return reasons.READY_CONDITION_STALE
    return None
