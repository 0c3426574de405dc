"""The models a what-if recomputes: a changed runtime touches exactly the models in its scope
that one of its entries could match (matching.runtime_could_match), a changed model itself."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from django.conf import settings

import matching
from inventory.manifests import read_manifests
from tests.support.demo import DEMO_FOLDERS
from tests.support.inventory import inventory_from_objects
from whatif.overlay import affected_models, replaced_inventory


def test_a_changed_runtime_touches_the_models_it_could_match_in_its_scope() -> None:
    snapshot = read_manifests([Path(settings.BASE_DIR) / folder for folder in DEMO_FOLDERS])
    inventory = inventory_from_objects(obj for objects in snapshot.objects.values() for obj in objects.values())
    model = next(iter(inventory.models))
    touched_any = False

    for key, runtime in inventory.runtimes.items():
        expected = sorted(
            model_key
            for model_key, parsed in inventory.models.items()
            if matching.in_scope(key, model_key) and matching.runtime_could_match(runtime, parsed)
        )
        assert affected_models(inventory, inventory, [key]) == expected, key
        assert affected_models(inventory, inventory, [key, model]) == sorted({*expected, model}), key
        touched_any = touched_any or bool(expected)

    assert touched_any


def test_either_view_counts_when_the_change_also_adds_or_removes_models() -> None:
    snapshot = read_manifests([Path(settings.BASE_DIR) / folder for folder in DEMO_FOLDERS])
    inventory = inventory_from_objects(obj for objects in snapshot.objects.values() for obj in objects.values())
    runtime = next(key for key in inventory.runtimes if affected_models(inventory, inventory, [key]))
    served = affected_models(inventory, inventory, [runtime])
    gone = served[0]

    without = replaced_inventory(inventory, {}, [gone])  # the model deleted in the what-if
    emptied = replaced_inventory(inventory, {runtime: replace(inventory.runtimes[runtime], entries=())}, [])

    assert affected_models(inventory, without, [runtime, gone]) == served
    assert affected_models(without, inventory, [runtime]) == served
    assert affected_models(without, without, [runtime]) == served[1:]
    assert affected_models(inventory, emptied, [runtime]) == served  # the old view's matches count
