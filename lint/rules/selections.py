"""The rows the lint reads: what OME picks for each valid model in each namespace, indexed by
runtime. They are the grid's selections over the cluster's cached Inventory (the same grid
memos as the matrix build), so they always agree with the inventory the findings name."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from inventory.parsed import Inventory
from matching import Match, ObjectKey, model_error, model_size_value


@dataclass(frozen=True)
class Row:
    """What OME picks for one valid model in one namespace: the ranked matches (best first)
    and the manual-only runtimes with why."""

    model: ObjectKey
    namespace: str
    ranked: tuple[Match, ...]
    manual: tuple[tuple[ObjectKey, str], ...]


@dataclass(frozen=True)
class Ranked:
    runtime: ObjectKey
    model: ObjectKey
    namespace: str
    rank: int
    score: int
    entry: int
    row: Row


def selection_rows(inventory: Inventory) -> list[Row]:
    """Every valid model's selection in each namespace it has a row in (as the matrix stores)."""
    rows = []
    for model_key, model in sorted(inventory.models.items()):
        if model_error(model) is not None:
            continue
        for namespace in inventory.namespaces_for(model_key):
            selection = inventory.grid.select(model_key, namespace)
            manual = tuple(sorted(selection.manual_keys.items()))
            rows.append(Row(model_key, namespace, tuple(selection.compatible), manual))
    return rows


class Rows:
    """The selection rows of an inventory, indexed by runtime."""

    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory
        self.rows = selection_rows(inventory)
        self.ranked: dict[ObjectKey, list[Ranked]] = defaultdict(list)
        self.manual: dict[ObjectKey, list[tuple[ObjectKey, str, str]]] = defaultdict(list)
        self._sizes: dict[ObjectKey, float | None] = {}
        for row in self.rows:
            for rank, match in enumerate(row.ranked):
                self.ranked[match.key].append(
                    Ranked(match.key, row.model, row.namespace, rank, match.score, match.entry or 0, row)
                )
            for runtime_key, reason in row.manual:
                self.manual[runtime_key].append((row.model, row.namespace, reason))

    def size(self, model_key: ObjectKey) -> float | None:
        """The model's parsed size (memoised: a model has a row per namespace)."""
        if model_key not in self._sizes:
            self._sizes[model_key] = model_size_value(self.inventory.models[model_key])
        return self._sizes[model_key]

    def matched_models(self, runtime_key: ObjectKey) -> list[ObjectKey]:
        found = {item.model for item in self.ranked.get(runtime_key, ())}
        found |= {model for model, _ns, _reason in self.manual.get(runtime_key, ())}
        return sorted(found)
