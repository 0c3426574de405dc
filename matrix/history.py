"""The matrix history as people read it: cell changes grouped by the change that caused them
(one patch, one edit of a runtime, one rebuild), newest first, each group with the causing
objects' changed fields (old and new values). The page (web.pages.history) adds the patch
audit record that made a group, matched by object and version (`cause_versions`).

One matrix update records its cells with the same `cause` within moments of each other, so
consecutive CellChanges with an equal cause, less than GAP apart, are one group.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db.models import QuerySet

from access.restrict import Action
from access.scope import Scope
from inventory.models import Cluster, Resource

from .models import CellChange

GAP = timedelta(seconds=5)
GROUPS_PER_PAGE = 20
ROWS_READ = 5000  # per page: enough for 20 groups of a large cluster's updates
CELLS_SHOWN = 60


@dataclass
class HistoryGroup:
    cause: list[dict[str, Any]]
    changes: list[CellChange] = field(default_factory=list)
    patches: list[Any] = field(default_factory=list)  # patches.models.PatchAttempt, set by the page
    objects: dict[tuple[str, str, str], Resource] = field(default_factory=dict)

    @property
    def newest(self) -> datetime:
        return self.changes[0].changed_at

    @property
    def oldest_pk(self) -> int:
        return self.changes[-1].pk

    @property
    def full_rebuild(self) -> bool:
        return not self.cause

    @property
    def shown(self) -> list[CellChange]:
        return self.changes[:CELLS_SHOWN]

    @property
    def models(self) -> int:
        return len({(c.model_kind, c.model_namespace, c.model_name) for c in self.changes})

    def causes(self) -> list[dict[str, Any]]:
        """Each causing object with its page (when it still exists) and changed values."""
        found = []
        for item in self.cause:
            key = cause_key(item)
            values = item.get("values") or {}
            found.append(
                {
                    **item,
                    "resource": self.objects.get(key),
                    "changed": [
                        (name, _text(value.get("old")), _text(value.get("new"))) for name, value in values.items()
                    ],
                }
            )
        return found


def _text(value: Any) -> str:
    return "(none)" if value is None else json.dumps(value, sort_keys=True, indent=1, default=str)


def _same_update(group: HistoryGroup, change: CellChange) -> bool:
    return change.cause == group.cause and group.changes[-1].changed_at - change.changed_at <= GAP


def group_changes(changes: Iterable[CellChange], limit: int = GROUPS_PER_PAGE) -> tuple[list[HistoryGroup], bool]:
    """Consecutive changes (newest first) of one update as groups; True when more followed."""
    groups: list[HistoryGroup] = []
    for change in changes:
        if groups and _same_update(groups[-1], change):
            groups[-1].changes.append(change)
            continue
        if len(groups) == limit:
            return groups, True
        groups.append(HistoryGroup(cause=change.cause, changes=[change]))
    return groups, False


def cause_key(item: dict[str, Any]) -> tuple[str, str, str]:
    return (str(item.get("kind", "")), str(item.get("namespace", "")), str(item.get("name", "")))


def cause_versions(item: dict[str, Any]) -> list[str]:
    """The versions a patch of the causing object records as its new version: the
    resourceVersion (live clusters) and the content token (manifest snapshots)."""
    version = item.get("version") or {}
    found = [str(version.get("resourceVersion") or "")]
    if version.get("content"):
        found.append(f"content-{version['content']}")
    return [value for value in found if value]


def _attach_objects(cluster: Cluster, groups: Sequence[HistoryGroup], scope: Scope) -> None:
    keys = {cause_key(item) for group in groups for item in group.cause}
    names = {key[2] for key in keys}
    found = Resource.objects.restrict(scope, Action.VIEW).filter(cluster=cluster, name__in=names).defer("obj")
    objects = {r.key: r for r in found if r.key in keys}
    for group in groups:
        group.objects = objects


def history_page(
    cluster: Cluster, *, scope: Scope, before: int | None = None, model: tuple[str, str, str] | None = None
) -> tuple[list[HistoryGroup], bool]:
    """A page of the cluster's history as `scope` reads it (the cells of its namespaces, the
    causes in them), newest first, from before the change with id `before`; with `model`, only
    the changes of that model's cells."""
    rows: QuerySet[CellChange] = CellChange.objects.restrict(scope, Action.VIEW).filter(cluster=cluster).order_by("-pk")
    if before is not None:
        rows = rows.filter(pk__lt=before)
    if model is not None:
        rows = rows.filter(model_kind=model[0], model_namespace=model[1], model_name=model[2])
    read = list(rows[:ROWS_READ])
    groups, more = group_changes(read)
    for group in groups:
        group.cause = [item for item in group.cause if scope.reads(cluster.name, cause_key(item)[1])]
    _attach_objects(cluster, groups, scope)
    return groups, more or len(read) == ROWS_READ
