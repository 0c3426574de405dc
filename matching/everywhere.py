"""One rule for showing a cluster-scoped model once: it is selected for in cluster scope and in
every namespace (`Objects.namespaces_for`), so a report by (model, namespace) repeats it; where
all its rows say the same, one row stands for them, marked "same in every namespace". A runtime
of one namespace that decides differently there keeps the rows apart. The fleet, `diff` and the
dashboard's upgrade and what-if pages use it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable
from typing import TypeVar

from .types import ObjectKey

EVERYWHERE = "same in every namespace"
"""How a folded row names its namespace."""

R = TypeVar("R")


def home_namespace(model: ObjectKey) -> str:
    """Where a model lives: a BaseModel's namespace, a ClusterBaseModel's cluster scope ("")."""
    return model[1] if model[0] == "BaseModel" else ""


def fold_everywhere(
    rows: Iterable[R],
    *,
    model: Callable[[R], ObjectKey],
    same: Callable[[R], Hashable],
    namespace: Callable[[R], str] | None = None,
    compared: Callable[[ObjectKey], Collection[str]] | None = None,
) -> list[tuple[R, bool]]:
    """Each row with False, except that the rows of a cluster-scoped model (two or more) whose
    `same` values are all equal become their first row with True (to be shown once, in cluster
    scope). Models keep the order of their first row.

    Given `namespace` (a row's) and `compared` (the namespaces a model's rows were compared in),
    a model folds only when it has a row in each of them: rows of changes alone (a report lists
    what changes) may be the same in some namespaces and absent in one whose own runtime keeps
    its pick, which is not "the same in every namespace"."""
    by_model: dict[ObjectKey, list[R]] = {}
    for row in rows:
        by_model.setdefault(model(row), []).append(row)
    folded: list[tuple[R, bool]] = []
    for key, group in by_model.items():
        alike = home_namespace(key) == "" and len(group) > 1 and len({same(row) for row in group}) == 1
        if alike and namespace is not None and compared is not None:
            alike = {namespace(row) for row in group} >= set(compared(key))
        if alike:
            folded.append((group[0], True))
        else:
            folded.extend((row, False) for row in group)
    return folded
