"""The lint report of a cluster, computed once per inventory version."""

from __future__ import annotations

from core.cache import VersionedCache
from inventory.models import Cluster
from inventory.parsed import load_inventory

from .rules import LintReport, lint_inventory

# Cluster id -> the report at an inventory fingerprint: the lint over a whole cluster takes
# ~100 ms for the bundled catalog, so pages reuse it until the inventory changes.
_LINT: VersionedCache[str, LintReport] = VersionedCache(owners=64)


def lint_report_get(cluster: Cluster) -> LintReport:
    """`lint.rules.lint_inventory` for the cluster's current inventory, computed once per version."""
    inventory = load_inventory(cluster)
    return _LINT.get(
        cluster.pk, inventory.fingerprint, lambda _stale: lint_inventory(inventory, cluster_name=cluster.name)
    )
