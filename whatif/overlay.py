"""The hypothetical inventory of a what-if, and the model rows its changes can touch.

The cluster's cached `Inventory` is never mutated: the overlay is a copy with the objects
replaced. A model change touches that model's rows; a runtime change touches the rows of the
models one of its entries (before or after the change) could match, in the runtime's scope.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from inventory.models import MODEL_KINDS
from inventory.parsed import Inventory
from matching import ObjectKey, Runtime

from .parse import Parsed


def replaced_inventory(
    inventory: Inventory, changes: Mapping[ObjectKey, Parsed], deletions: Iterable[ObjectKey]
) -> Inventory:
    """A new Inventory with `changes` put in and `deletions` taken out; `inventory` is untouched.
    New objects get negative ids (they have no resource yet)."""
    view = inventory.copy(fingerprint=f"{inventory.fingerprint}+whatif")
    for key in deletions:
        view.remove(key)
    next_id = -1
    for key, value in changes.items():
        if key not in view.ids:
            view.ids[key] = next_id
            next_id -= 1
        view.put(key, value)
    return view


def affected_models(old: Inventory, new: Inventory, changed: Iterable[ObjectKey]) -> list[ObjectKey]:
    """Model keys whose rows the changed objects can touch, in either view."""
    found: set[ObjectKey] = set()
    runtimes: list[Runtime] = []
    for key in changed:
        if key[0] in MODEL_KINDS:
            found.add(key)
        else:
            runtimes += [view.runtimes[key] for view in (old, new) if key in view.runtimes]
    if runtimes:
        # The models in a runtime's scope that it could match (runtime_could_match), by index;
        # a change of runtimes alone leaves the models, and so the old view's index, as they were.
        for view in (old,) if new.models == old.models else (old, new):
            for runtime in runtimes:
                found.update(view.candidates.candidates(runtime))
    return sorted(found)
