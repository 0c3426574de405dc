"""The periodic audit: recompute a sample of a matrix from scratch and repair what differs.

Rows that the stamps show stale are left to the next update (they are not wrong, only behind);
any other row that differs from its recomputation is a defect. It is repaired through the same
write as an update, and counted in a MatrixAudit (the ome_matrix_audit_* metrics).
"""

from __future__ import annotations

import logging
import random

from inventory.models import Cluster
from inventory.parsed import load_inventory

from .models import MatrixAudit, MatrixRow
from .rows import RowData, compute_rows
from .selectors import current_build
from .updates import Staleness, matrix_staleness, write_rows

logger = logging.getLogger(__name__)

# Audits kept per cluster; the newest is what the metrics report.
AUDITS_KEPT = 20
EXAMPLES_KEPT = 50


def matrix_audit(cluster: Cluster, *, sample: int) -> MatrixAudit | None:
    """Audit up to `sample` models of the current matrix (every model of a smaller cluster);
    None when there is no matrix, or every row is stale anyway (an update is due)."""
    build = current_build(cluster)
    if build is None:
        return None
    stale = matrix_staleness(cluster, build)
    if stale.everything:
        return None
    inventory = load_inventory(cluster)
    pending = set(stale.model_ids)
    candidates = [key for key in inventory.model_keys if inventory.ids[key] not in pending]
    chosen = candidates if len(candidates) <= sample else random.sample(candidates, sample)
    fresh = compute_rows(inventory, chosen)
    ids = [inventory.ids[key] for key in chosen]
    stored = {
        (row.model_id, row.namespace): RowData.from_row(row)
        for row in MatrixRow.objects.filter(build=build, model_id__in=ids)
    }
    recomputed = {row.identity: row for row in fresh}
    differing = sorted(
        identity for identity in set(stored) | set(recomputed) if stored.get(identity) != recomputed.get(identity)
    )
    # What changed while the audit ran is behind, not wrong.
    after = matrix_staleness(cluster, build)
    if after.everything:
        return None
    behind = set(after.model_ids)
    differing = [identity for identity in differing if identity[0] not in behind]
    if differing:
        models = sorted({identity[0] for identity in differing})
        logger.error("cluster %s: the audit found %d matrix rows that differ; repairing", cluster, len(differing))
        repair = Staleness(version=stale.version, digest=stale.digest, model_ids=models)
        write_rows(cluster, build, repair, inventory, [row for row in fresh if row.model_id in set(models)], [])
    report = MatrixAudit.objects.create(
        cluster=cluster,
        models_checked=len(chosen),
        rows_checked=len(recomputed),
        rows_differing=len(differing),
        examples=[[*inventory.keys[model_id], namespace] for model_id, namespace in differing[:EXAMPLES_KEPT]],
    )
    old = MatrixAudit.objects.filter(cluster=cluster).values_list("pk", flat=True)[AUDITS_KEPT:]
    MatrixAudit.objects.filter(pk__in=list(old)).delete()
    return report
