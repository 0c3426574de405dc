"""What an OME upgrade (or any other OME) would change in a cluster: `matching.behaviour_diff`
between the profile that judges the cluster and another, computed once per inventory version."""

from __future__ import annotations

from dataclasses import dataclass

import matching
from access.scope import Scope
from core.api import api_keys
from core.cache import VersionedCache
from core.errors import DomainError
from inventory.models import Cluster
from inventory.ome_release import Judgement, judge
from inventory.parsed import inventory_for
from matching import Difference, ObjectKey, key_text

SUBJECTS = (
    ("isvc", "InferenceServices"),
    ("selection", "Runtime picks (per model and namespace)"),
    ("cell", "Cells (a model against a runtime)"),
)


class UnknownBehaviour(DomainError):
    code = "invalid"
    http_status = 400


@dataclass(frozen=True)
class UpgradeReport:
    """The differences between the cluster's profile (`judgement`) and `other`, with the
    resource ids of the objects they name (for links)."""

    cluster: Cluster
    judgement: Judgement
    other: matching.Behaviour
    differences: list[Difference]
    ids: dict[ObjectKey, int]
    namespaces: tuple[str, ...] | None = ("",)
    """Where a cluster-scoped model's selections were compared: cluster scope and each namespace;
    None when the reader does not read every namespace, so no row may claim "every namespace"."""

    @property
    def changes(self) -> list[tuple[str, str]]:
        """The behaviours the two profiles differ in: (U-number, words)."""
        return [
            (code, matching.CHANGES[code]) for code in matching.changes_between(self.judgement.behaviour, self.other)
        ]

    def by_subject(self) -> list[tuple[str, str, int, list[tuple[Difference, str, str, int]]]]:
        """For the page: each subject's title, its number of differences, and its rows: each
        difference with its values in words and how many differences the row stands for (a
        cluster-scoped model's selections that differ alike in cluster scope and every
        namespace are one row, `matching.fold_everywhere`)."""
        found = []
        for subject, title in SUBJECTS:
            items = [item for item in self.differences if item.subject == subject]
            if subject == "selection" and self.namespaces is not None:
                rows = _folded(items, self.namespaces)
            else:
                rows = [(item, 1) for item in items]
            found.append(
                (subject, title, len(items), [(item, shown(item.before), shown(item.after), n) for item, n in rows])
            )
        return found

    def to_dict(self) -> dict[str, object]:
        return {
            "cluster": self.cluster.name,
            "from": self.judgement.to_dict(),
            "to": api_keys(self.other.to_dict()),
            "changes": [{"code": code, "description": text} for code, text in self.changes],
            "count": len(self.differences),
            "differences": [
                {
                    **item.to_dict(),
                    "model_id": self.ids.get(item.model) if item.model else None,
                    "runtime_id": self.ids.get(item.runtime) if item.runtime else None,
                }
                for item in self.differences
            ],
        }


def shown(value: object) -> str:
    """A difference's value in words: a verdict, a runtime, a score or OME's text."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "compatible" if value else "incompatible"
    if isinstance(value, tuple) and len(value) == 3:
        return key_text((str(value[0]), str(value[1]), str(value[2])))
    return str(value)


# (cluster id, other profile) -> the differences at an inventory fingerprint (which names the
# cluster's own profile too): the diff evaluates the grid under both profiles.
_DIFFS: VersionedCache[str, list[Difference]] = VersionedCache("upgrade_diffs")


def other_behaviour(name: str | None) -> matching.Behaviour:
    """The profile to compare with: the named one, by default the newest."""
    try:
        return matching.as_behaviour(name or matching.NEWEST_BEHAVIOUR)
    except ValueError as error:
        raise UnknownBehaviour(str(error), field="to") from None


def upgrade_report(cluster: Cluster, to: str | None = None, *, scope: Scope) -> UpgradeReport:
    """What `to` (default: the newest profile) decides differently from the cluster's profile,
    in the objects and namespaces `scope` reads (inventory_for): computed once per part of the
    inventory, whose fingerprint names the namespaces read."""
    other = other_behaviour(to)
    inventory = inventory_for(cluster, scope=scope)
    read = scope.read_namespaces(cluster.name)
    differences = _DIFFS.get(
        (cluster.pk, other.name, read),
        inventory.fingerprint,
        lambda _stale: matching.behaviour_diff(inventory.grid, other, inventory.invalid),
    )
    return UpgradeReport(
        cluster=cluster,
        judgement=judge(cluster),
        other=other,
        differences=differences,
        ids=dict(inventory.ids),
        namespaces=("", *inventory.grid.namespaces) if read is None else None,
    )


def _folded(items: list[Difference], namespaces: tuple[str, ...]) -> list[tuple[Difference, int]]:
    """Selection differences, each with how many it stands for: those of a cluster-scoped model
    in one field that say the same (values and causes) in all `namespaces` are its first."""
    standing: dict[int, int] = {}  # id of a difference shown -> how many it stands for
    for field in dict.fromkeys(item.field for item in items):
        rows = [item for item in items if item.field == field]
        folded = matching.fold_everywhere(
            rows,
            model=_model,
            same=lambda item: (item.before, item.after, item.causes, item.together),
            namespace=lambda item: item.namespace or "",
            compared=lambda _key: namespaces,
        )
        for item, once in folded:
            standing[id(item)] = sum(row.model == item.model for row in rows) if once else 1
    return [(item, standing[id(item)]) for item in items if id(item) in standing]


def _model(item: Difference) -> ObjectKey:
    if item.model is None:
        raise ValueError(f"a {item.subject} difference in {item.field} names no model: {item}")
    return item.model
