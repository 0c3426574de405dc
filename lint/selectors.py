"""The lint report of a cluster, computed once per inventory version, and its finding groups
with their acknowledgements."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from access.restrict import Action
from access.scope import Scope
from core.cache import VersionedCache
from inventory.models import Cluster
from inventory.parsed import Inventory, load_inventory
from matching import ObjectKey

from .models import LintAcknowledgement, LintProofs
from .rules import Finding, FindingGroup, LintReport, lint_inventory
from .rules.fixes import Fix
from .rules.proofs import Proof, proofs_key, with_proofs
from .rules.report import severity_counts

# Cluster id -> the report at an inventory fingerprint: the lint over a whole cluster takes
# ~100 ms for the bundled catalog, so pages reuse it until the inventory changes.
_LINT: VersionedCache[str, LintReport] = VersionedCache("lint_reports")
# The same with the proofs of every fix, as the proving task stored them (lint.proving).
_PROVEN: VersionedCache[str, LintReport] = VersionedCache("lint_proven")
FIX_HIDDEN = (
    "its fix changes or moves objects in namespaces you may not read; someone who reads the whole cluster sees it"
)
FIXES_PENDING = "the what-if is proving this fix for the current inventory; it shows once proven"


def lint_report_get(cluster: Cluster, *, scope: Scope, proven: bool = False) -> LintReport:
    """`lint.rules.lint_inventory` for the cluster's current inventory, computed once per version,
    with the findings the scope reads: a finding about any object or row of a namespace
    the reader may not read is left out whole (its message names and counts them). `proven`:
    as the lint page shows it, every fix with its proofs for this inventory (lint.proving) or,
    until they are stored, no fixes at all (`fixes_pending_for`; `no_fix` says why)."""
    inventory = load_inventory(cluster)
    report = _LINT.get(cluster.pk, inventory.fingerprint, lambda _stale: _linted(inventory, cluster.name))
    if proven:
        report = _proven(cluster, report, report.fingerprint, scope)
    if scope.reads_whole(cluster.name):
        return report
    return dataclasses.replace(
        report,
        findings=[f for f in report.findings if _readable(scope, cluster.name, f)],
        # A group is shown only when the reader may read every finding in it.
        groups=[
            _fixes_readable(scope, cluster.name, g)
            for g in report.groups
            if all(_readable(scope, cluster.name, f) for f in g.findings)
        ],
    )


def _linted(inventory: Inventory, cluster_name: str) -> LintReport:
    report = lint_inventory(inventory, cluster_name=cluster_name)
    return dataclasses.replace(report, fingerprint=proofs_key(inventory.fingerprint, report.groups))


def _proven(cluster: Cluster, report: LintReport, fingerprint: str, scope: Scope) -> LintReport:
    """The report with the stored proofs of this inventory (held per process once read), else
    without its fixes: never a fix unproven, nor one proven against another inventory."""
    held = _PROVEN.peek(cluster.pk, fingerprint)
    if held is not None:
        return held
    stored = (
        LintProofs.objects.restrict(scope, Action.VIEW)
        .filter(cluster=cluster, fingerprint=fingerprint)
        .values_list("proofs", flat=True)
        .first()
    )
    if stored is None:
        groups = [
            dataclasses.replace(group, fix=None, alternative=None, no_fix=FIXES_PENDING) if group.fix else group
            for group in report.groups
        ]
        return dataclasses.replace(report, groups=groups, fixes_pending_for=cluster.inventory_version)
    proven = dataclasses.replace(report, groups=with_proofs(report.groups, stored))
    return _PROVEN.get(cluster.pk, fingerprint, lambda _stale: proven)


def lint_fix_manifests(cluster: Cluster, fingerprint: str, *, scope: Scope) -> list[list[Any]] | None:
    """The YAML each lint fix form fills in, stored with the proofs filed under `fingerprint`
    (a report's, lint.proving); None until they are."""
    found = LintProofs.objects.restrict(scope, Action.VIEW).filter(cluster=cluster, fingerprint=fingerprint)
    manifests: list[list[Any]] | None = found.values_list("manifests", flat=True).first()
    return manifests


def _fixes_readable(scope: Scope, cluster: str, group: FindingGroup) -> FindingGroup:
    """The group without the fixes whose objects or proofs name something the reader may not
    read (a runtime another team's models move to, a partner fix of another namespace)."""
    if not scope.keys_visible(cluster, _named(group.fix, group.proof, group.pair, group.partner)):
        return dataclasses.replace(
            group, fix=None, proof=None, pair=None, partner=None, alternative=None, alternative_proof=None,
            no_fix=FIX_HIDDEN,
        )  # fmt: skip
    if not scope.keys_visible(cluster, _named(group.alternative, group.alternative_proof)):
        return dataclasses.replace(group, alternative=None, alternative_proof=None)
    return group


def _named(*parts: Fix | Proof | None) -> list[ObjectKey]:
    keys: list[ObjectKey] = []
    for part in parts:
        if isinstance(part, Fix):
            keys += [part.target, *part.changed]
        elif isinstance(part, Proof):
            keys += [key for move in part.moves for key in (move.model, move.old, move.new) if key is not None]
    return keys


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


def lint_group_states(cluster: Cluster, *, scope: Scope, report: LintReport | None = None) -> list[GroupState]:
    """The groups of `report` (by default the cluster's lint as `scope` reads it) with their
    active acknowledgements."""
    groups = (report or lint_report_get(cluster, scope=scope)).groups
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
