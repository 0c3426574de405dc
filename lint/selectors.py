"""The lint report of a cluster, computed once per inventory version."""

from __future__ import annotations

import dataclasses

from access.current import current_scope
from access.scope import Scope
from core.cache import VersionedCache
from inventory.models import Cluster
from inventory.parsed import load_inventory

from .rules import Finding, LintReport, lint_inventory

# Cluster id -> the report at an inventory fingerprint: the lint over a whole cluster takes
# ~100 ms for the bundled catalog, so pages reuse it until the inventory changes.
_LINT: VersionedCache[str, LintReport] = VersionedCache(owners=64)


def lint_report_get(cluster: Cluster) -> LintReport:
    """`lint.rules.lint_inventory` for the cluster's current inventory, computed once per version,
    with the findings the current scope reads: a finding about any object or row of a namespace
    the reader may not read is left out whole (its message names and counts them)."""
    inventory = load_inventory(cluster)
    report = _LINT.get(
        cluster.pk, inventory.fingerprint, lambda _stale: lint_inventory(inventory, cluster_name=cluster.name)
    )
    scope = current_scope()
    if scope.reads_whole(cluster.name):
        return report
    return dataclasses.replace(report, findings=[f for f in report.findings if _readable(scope, cluster.name, f)])


def _readable(scope: Scope, cluster: str, finding: Finding) -> bool:
    return scope.keys_visible(cluster, [*finding.runtimes, *finding.models]) and all(
        scope.reads(cluster, namespace) for namespace in finding.namespaces
    )
