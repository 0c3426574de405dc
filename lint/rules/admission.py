"""`webhook-refuses`: runtimes OME's own runtime admission webhook would refuse as they stand
(`matching.admit_runtime`: a profile that is not disabled, a broken inheritance chain, different
or clashing priorities). They exist because they were admitted before a parent was deleted, a
rule was added or OME was upgraded; OME then refuses every update of them until they are fixed
(ome-docs `concepts/runtimes/runtime-inheritance.md`, "What admission checks"). The
AcceleratorClasses are not mirrored, so unknown classes are not checked."""

from __future__ import annotations

import matching
from inventory.parsed import Inventory

from .report import Finding


def webhook_refusals(inventory: Inventory) -> list[Finding]:
    runtimes = list(inventory.runtimes.values())
    found = []
    for runtime in runtimes:
        errors = matching.admit_runtime(runtime, runtimes, behaviour=inventory.behaviour).errors
        if errors:
            message = f"{matching.key_text(runtime.key)}: OME's runtime webhook refuses updates to it: {errors[0]}"
            found.append(
                Finding("warning", "webhook-refuses", message, runtimes=[runtime.key], details={"errors": list(errors)})
            )
    return found
