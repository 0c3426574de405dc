"""The lint report of a cluster, computed once per inventory version, and its finding groups
with their acknowledgements."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from django.db.models import QuerySet

from access.restrict import Action
from access.scope import Scope
from core.cache import VersionedCache
from inventory.models import Cluster, Resource
from inventory.parsed import Inventory, load_inventory
from matching import ObjectKey

from .models import LintAcknowledgement
from .rules import Finding, FindingGroup, LintReport, lint_inventory
from .rules.proofs import proven_groups
from .rules.report import severity_counts

# Cluster id -> the report at an inventory fingerprint: the lint over a whole cluster takes
# ~100 ms for the bundled catalog, so pages reuse it until the inventory changes.
_LINT: VersionedCache[str, LintReport] = VersionedCache("lint_reports")
# The same with every fix proven by the what-if (~2 s on the demo): only the lint page and API.
_PROVEN: VersionedCache[str, LintReport] = VersionedCache("lint_proven")


def lint_report_get(cluster: Cluster, *, scope: Scope, proven: bool = False) -> LintReport:
    """`lint.rules.lint_inventory` for the cluster's current inventory, computed once per version,
    with the findings the scope reads: a finding about any object or row of a namespace
    the reader may not read is left out whole (its message names and counts them). `proven`:
    with every fix run through the what-if (see proven_report), as the lint page shows them."""
    inventory = load_inventory(cluster)
    if proven:
        report = _PROVEN.get(cluster.pk, inventory.fingerprint, lambda _stale: proven_report(inventory, cluster.name))
    else:
        report = _LINT.get(
            cluster.pk, inventory.fingerprint, lambda _stale: lint_inventory(inventory, cluster_name=cluster.name)
        )
    if scope.reads_whole(cluster.name):
        return report
    return dataclasses.replace(
        report,
        findings=[f for f in report.findings if _readable(scope, cluster.name, f)],
        # A group is shown only when the reader may read every finding in it.
        groups=[g for g in report.groups if all(_readable(scope, cluster.name, f) for f in g.findings)],
    )


def proven_report(inventory: Inventory, cluster_name: str) -> LintReport:
    """The lint of the inventory with every fix run through the what-if (lint.rules.proofs).
    Reads the stored objects the fixes change, whatever the reader: the report is cached
    for every reader and filtered by scope afterwards."""
    report = lint_inventory(inventory, cluster_name=cluster_name)
    keys = {key for group in report.groups if group.fix is not None for key in group.fix.changed}
    ids: dict[int, ObjectKey] = {inventory.ids[key]: key for key in keys if key in inventory.ids}
    raw = {ids[pk]: obj for pk, obj in Resource.objects.filter(pk__in=list(ids)).values_list("pk", "obj")}
    return dataclasses.replace(report, groups=proven_groups(report.groups, inventory, raw))


def _readable(scope: Scope, cluster: str, finding: Finding) -> bool:
    return scope.keys_visible(cluster, [*finding.runtimes, *finding.models]) and all(
        scope.reads(cluster, namespace) for namespace in finding.namespaces
    )


@dataclass(frozen=True)
class GroupState:
    """A finding group with its active acknowledgement. `hidden`: acknowledged as it is now; an
    acknowledgement of the group as it was before its findings changed does not hide it."""

    group: FindingGroup
    acknowledgement: LintAcknowledgement | None

    @property
    def hidden(self) -> bool:
        return self.acknowledgement is not None and self.acknowledgement.signature == self.group.signature

    @property
    def changed_since_acknowledged(self) -> bool:
        return self.acknowledgement is not None and not self.hidden


def lint_group_states(cluster: Cluster, *, scope: Scope, proven: bool = False) -> list[GroupState]:
    groups = lint_report_get(cluster, scope=scope, proven=proven).groups
    acks = LintAcknowledgement.objects.restrict(scope, Action.VIEW).filter(cluster=cluster, withdrawn_at__isnull=True)
    active = {ack.key: ack for ack in acks.filter(key__in=[group.key for group in groups])}
    return [GroupState(group, active.get(group.key)) for group in groups]


def lint_acknowledgement_list(cluster: Cluster, *, scope: Scope) -> QuerySet[LintAcknowledgement]:
    """The cluster's acknowledgements, withdrawn ones included, that the scope reads: every one
    to a reader of the whole cluster, else those of the finding groups it reads now (a group's
    key and title name the objects of its findings)."""
    acks = LintAcknowledgement.objects.restrict(scope, Action.VIEW).filter(cluster=cluster)
    if scope.reads_whole(cluster.name):
        return acks
    return acks.filter(key__in=[group.key for group in lint_report_get(cluster, scope=scope).groups])


def lint_open_counts(cluster: Cluster, *, scope: Scope) -> dict[str, int]:
    """Finding groups per severity, without the acknowledged ones (the matrix's count)."""
    states = lint_group_states(cluster, scope=scope)
    return severity_counts(state.group.severity for state in states if not state.hidden)
