"""The lint report of a cluster, computed once per inventory version, and its finding groups
with their acknowledgements."""

from __future__ import annotations

from dataclasses import dataclass

from core.cache import VersionedCache
from inventory.models import Cluster
from inventory.parsed import load_inventory

from .models import LintAcknowledgement
from .rules import FindingGroup, LintReport, lint_inventory
from .rules.report import severity_counts

# Cluster id -> the report at an inventory fingerprint: the lint over a whole cluster takes
# ~100 ms for the bundled catalog, so pages reuse it until the inventory changes.
_LINT: VersionedCache[str, LintReport] = VersionedCache(owners=64)


def lint_report_get(cluster: Cluster) -> LintReport:
    """`lint.rules.lint_inventory` for the cluster's current inventory, computed once per version."""
    inventory = load_inventory(cluster)
    return _LINT.get(
        cluster.pk, inventory.fingerprint, lambda _stale: lint_inventory(inventory, cluster_name=cluster.name)
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


def lint_group_states(cluster: Cluster) -> list[GroupState]:
    active = {ack.key: ack for ack in LintAcknowledgement.objects.filter(cluster=cluster, withdrawn_at__isnull=True)}
    return [GroupState(group, active.get(group.key)) for group in lint_report_get(cluster).groups]


def lint_open_counts(cluster: Cluster) -> dict[str, int]:
    """Finding groups per severity, without the acknowledged ones (the matrix's count)."""
    return severity_counts(state.group.severity for state in lint_group_states(cluster) if not state.hidden)
