"""A cluster's findings, as the dashboard shows them, for its reports (reports.build): models
OME gives no runtime (the matrix), InferenceServices OME silently ignores (isvcs), and the
failures of the policies' assertions (policies). Read for no reader: the reports hold the whole
cluster's findings, for the cluster's own RBAC to show."""

from __future__ import annotations

from collections.abc import Iterator

from access.restrict import Action
from access.scope import SYSTEM
from inventory.models import Cluster, Kind
from inventory.parsed import Inventory, inventory_for
from isvcs.services import isvc_verdicts
from matrix.counts import ACROSS, counted_rows
from matrix.models import MatrixRow
from matrix.outcomes import INVALID, NO_RUNTIME
from matrix.selectors import current_build, rows_visible
from policies.models import AssertionState

from .build import CLUSTER_SCOPE, FAIL, WARN, Finding

Key = tuple[str, str, str]


def cluster_findings(cluster: Cluster) -> list[Finding]:
    return [*_model_findings(cluster), *_isvc_findings(cluster), *_assertion_findings(cluster)]


def _report_namespace(key: Key) -> str:
    """A namespaced object's report is its namespace's; a cluster-scoped one's the cluster's."""
    return key[1] if key[0] in (Kind.BASE_MODEL, Kind.SERVING_RUNTIME, Kind.INFERENCE_SERVICE) else CLUSTER_SCOPE


def _model_findings(cluster: Cluster) -> Iterator[Finding]:
    """Each model once, where it lives (matrix.counts): no runtime at all, manual-only
    runtimes only, or invalid; with OME's own text."""
    build = current_build(cluster)
    if build is None:
        return
    rows = counted_rows(rows_visible(SYSTEM).filter(build=build), ACROSS)
    rows = rows.filter(outcome__in=[NO_RUNTIME, INVALID]).select_related("model")
    inventory = inventory_for(cluster, scope=SYSTEM)
    for row in rows:
        key: Key = (row.model.kind, row.model.namespace, row.model.name)
        yield _model_finding(row, key, inventory)


def _model_finding(row: MatrixRow, key: Key, inventory: Inventory) -> Finding:
    if row.outcome == INVALID:
        return Finding(_report_namespace(key), "valid-model", FAIL, row.invalid_reason, (key,), "high")
    if row.manual:
        runtimes = "; ".join(f"{name} ({reason})" for _kind, _ns, name, reason in row.manual)
        text = f"no runtime is auto-selected; an InferenceService must name one of: {runtimes}"
        return Finding(_report_namespace(key), "auto-selectable-runtime", WARN, text, (key,), "medium")
    # The inventory can be newer than the row: the next update's reports say what it changed.
    known = key in inventory.models
    text = (inventory.grid.select(key, row.namespace).error if known else None) or "no runtime found"
    return Finding(_report_namespace(key), "has-runtime", FAIL, text, (key,), "high")


def _isvc_findings(cluster: Cluster) -> Iterator[Finding]:
    for verdict in isvc_verdicts(cluster, scope=SYSTEM):
        if verdict.ignored is not None:
            key: Key = (Kind.INFERENCE_SERVICE.value, verdict.namespace, verdict.name)
            yield Finding(verdict.namespace, "not-silently-ignored", FAIL, verdict.ignored.text, (key,), "high")


def _assertion_findings(cluster: Cluster) -> Iterator[Finding]:
    """The failures of the assertions of the last evaluation (policies evaluate in their own
    task after each matrix update: a report can be one update behind them)."""
    states = AssertionState.objects.restrict(SYSTEM, Action.VIEW).filter(cluster=cluster, passing=False)
    for state in states.select_related("policy"):
        result, severity = (FAIL, "high") if state.severity == AssertionState.Severity.ERROR else (WARN, "medium")
        for failure in state.failures:
            keys = tuple((str(k[0]), str(k[1]), str(k[2])) for k in failure.get("keys") or [])
            namespace = str(failure.get("namespace") or "")
            text = str(failure.get("message") or "")
            yield Finding(namespace, f"assert-{state.policy.name}-{state.assertion}", result, text, keys, severity)
