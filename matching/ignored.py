"""Will OME silently ignore it? InferenceServices that OME admits (or admitted) but will not
render or re-render, and say little or nothing about it (issue 31 item 7; spec 10.7).

The reasons, each from `matching.evaluate_isvc`'s verdict except the last:

- `wrong-kind`, `shadowed` (verdict `silent`, v1.3): the model-config step finds no model of the
  requested kind, or a BaseModel shadows the ClusterBaseModel asked for: no workload, no event,
  only a controller log line (ome-docs `concepts/models/base-models.md`,
  `guides/troubleshoot/troubleshoot-an-inferenceservice.md`).
- `pvc-namespace` (blocked): the admission webhook refuses a `pvc://` ClusterBaseModel of another
  namespace on create and on every update (`validateClusterBaseModelPVCNamespace`).
- `runtime-chain` (blocked): the named runtime's `ome.io/inherit-from` chain does not resolve; the
  runtime webhook refuses such a chain, so it breaks only when a parent changes or goes
  (ome-docs `concepts/runtimes/runtime-inheritance.md`).
- `model-disabled`, `runtime-disabled` (blocked): OME stops updating the service
  (ome-docs `guides/deploy-models/reference-a-runtime-explicitly.md`: "A disabled runtime ...
  updates stop").
- `accelerator-dropped`: the runtime the service names lists no accelerator classes, so "OME
  ignores the class names and policies that the InferenceService sets, and records no event"
  (ome-docs `reference/matching/runtime-accelerator-class-matching.md`, "A named runtime without
  classes drops the class"; the page gives no "since", so every profile applies it). A named
  runtime is used with what it inherits (same page).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .grid import Grid
from .isvc import ADVISORY, BLOCKED, NAMED, SILENT, IsvcOutcome
from .isvc_lookup import IsvcObjects, named_runtime_lookup
from .keys import key_text
from .types import InferenceService, ObjectKey

ACCELERATOR_DROPPED = "accelerator-dropped"

_WHAT_OME_DOES = {
    "wrong-kind": "OME admits it and chooses a runtime, then creates no workload and records no event or condition; "
    "only the controller's log says it",
    "shadowed": "OME serves the namespace's BaseModel instead of the ClusterBaseModel asked for, and says nothing",
    "pvc-namespace": "OME's admission webhook refuses it, on create and on every update, so it is never (re)rendered",
    "runtime-chain": "OME cannot resolve the runtime it names, so it does not (re)render it",
    "model-disabled": "OME does not (re)render a service of a disabled model",
    "runtime-disabled": "OME stops updating a service whose runtime is disabled",
}
IGNORED_REASONS = (*_WHAT_OME_DOES, ACCELERATOR_DROPPED)
"""Every reason `ome_ignores` gives, in the order the docs list them."""


@dataclass(frozen=True, slots=True)
class Ignored:
    """Why OME silently ignores a service: `reason` (one of IGNORED_REASONS), `text` (what OME
    does, with OME's own words where it has any) and `fix` (one line)."""

    reason: str
    text: str
    fix: str

    def to_dict(self) -> dict[str, str]:
        return {"reason": self.reason, "text": self.text, "fix": self.fix}


def ome_ignores(
    outcome: IsvcOutcome,
    isvc: InferenceService | None,
    grid: Grid,
    invalid: Mapping[ObjectKey, str] | None = None,
) -> Ignored | None:
    """Whether OME admits (or admitted) the service but will not (re)render it as asked.
    `outcome` is `evaluate_isvc`'s for `isvc` over `grid` (`isvc` None: a malformed manifest)."""
    failure = outcome.failure or ""
    if (outcome.verdict == SILENT or outcome.verdict == BLOCKED) and failure in _WHAT_OME_DOES:
        said = f": {outcome.error}" if outcome.error else ""
        return Ignored(failure, _WHAT_OME_DOES[failure] + said, outcome.fix or "")
    if isvc is None or outcome.verdict not in (NAMED, ADVISORY) or not isvc.accelerator_requests:
        return None
    return _accelerator_dropped(isvc, grid, invalid or {})


def _accelerator_dropped(isvc: InferenceService, grid: Grid, invalid: Mapping[ObjectKey, str]) -> Ignored | None:
    runtime = named_runtime_lookup(IsvcObjects(grid, invalid), isvc).runtime
    if runtime is None or runtime.accelerator_classes:
        return None
    fields = ", ".join(f"{path}: {value}" for path, value in isvc.accelerator_requests)
    classes = [value for path, value in isvc.accelerator_requests if path.endswith(".acceleratorClass")]
    wanted = ", ".join(dict.fromkeys(classes)) or "the class the service needs"
    return Ignored(
        ACCELERATOR_DROPPED,
        f"{key_text(runtime.key)} lists no accelerator classes, so OME ignores {fields} and records no event",
        f"add {wanted} to spec.acceleratorRequirements.acceleratorClasses of {key_text(runtime.key)}",
    )
