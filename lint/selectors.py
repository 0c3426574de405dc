"""The lint report of a cluster, computed once per inventory version."""

from __future__ import annotations

from inventory.models import Cluster
from inventory.parsed import load_inventory

from .rules import LintReport, lint_inventory

# cluster id -> (inventory fingerprint, report): the lint over a whole cluster takes ~100 ms for
# the bundled catalog, so pages reuse it until the inventory changes.
_LINT: dict[int, tuple[str, LintReport]] = {}


def lint_report_get(cluster: Cluster) -> LintReport:
    """`lint.rules.lint_inventory` for the cluster's current inventory, computed once per version."""
    inventory = load_inventory(cluster)
    cached = _LINT.get(cluster.pk)
    if cached is not None and cached[0] == inventory.fingerprint:
        return cached[1]
    report = lint_inventory(inventory, cluster_name=cluster.name)
    _LINT[cluster.pk] = (inventory.fingerprint, report)
    return report
