"""The metrics a platform team pages on, beside ome_dashboard.ops.metrics' (which yields these
families in the same scrape): assertions by state, InferenceServices blocked or at risk, webhook
deliveries by status. Each cluster's freshness is ome_dashboard.ops.metrics' (matrix.freshness).

Label cardinality is bounded by construction: labels are cluster names (registered by an
admin), policy names (loaded by an admin), severity (error, warning), and fixed enums (state,
status); receiver names are admin-defined. No model, runtime, namespace or assertion subject
ever becomes a label: how many models fail is a value, which ones is on the Policies page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from django.db.models import Count, Max
from django.utils import timezone
from prometheus_client.core import GaugeMetricFamily, Metric

from access.scope import Scope
from inventory.models import Cluster
from isvcs.models import InferenceServiceVerdict
from matching import SILENT

from .models import AssertionState, Delivery

ISVC_STATES = ("deployable", "blocked", "at-risk", "silent")


def _assertion_families(clusters: Sequence[Cluster]) -> Iterator[Metric]:
    labels = ["cluster", "policy", "severity"]
    total = GaugeMetricFamily("ome_policy_assertions", "Assertions evaluated on the cluster.", labels=labels)
    failing = GaugeMetricFamily(
        "ome_policy_assertions_failing", "Assertions failing on the cluster (0 when all pass).", labels=labels
    )
    evaluated = GaugeMetricFamily(
        "ome_policy_evaluation_timestamp_seconds", "When policies were last evaluated.", labels=["cluster"]
    )
    names = {cluster.pk: cluster.name for cluster in clusters}
    rows = (
        AssertionState.objects.filter(cluster_id__in=names)
        .values("cluster_id", "policy__name", "severity", "passing")
        .annotate(n=Count("pk"))
        .order_by("cluster_id", "policy__name", "severity")
    )
    totals: Counter[tuple[str, str, str]] = Counter()
    failures: Counter[tuple[str, str, str]] = Counter()
    for row in rows:
        key = (names[row["cluster_id"]], row["policy__name"], row["severity"])
        totals[key] += row["n"]
        failures[key] += 0 if row["passing"] else row["n"]
    for key in sorted(totals):
        total.add_metric(list(key), totals[key])
        failing.add_metric(list(key), failures[key])
    latest = AssertionState.objects.filter(cluster_id__in=names).values("cluster_id").annotate(at=Max("evaluated_at"))
    for row in sorted(latest, key=lambda row: names[row["cluster_id"]]):
        evaluated.add_metric([names[row["cluster_id"]]], row["at"].timestamp())
    yield from (total, failing, evaluated)


def _isvc_state(first: str, current: str) -> str:
    if current == SILENT:
        return SILENT
    if current != "blocked":
        return "deployable"
    return "blocked" if first == "blocked" else "at-risk"


def _isvc_family(clusters: Sequence[Cluster]) -> Metric:
    family = GaugeMetricFamily(
        "ome_inferenceservices",
        "InferenceServices by state: deployable, blocked (OME refused it), at-risk (OME deployed it, would refuse it "
        "now), silent (OME admitted it and does nothing: no model of the kind it asks for).",
        labels=["cluster", "state"],
    )
    counts: Counter[tuple[int, str]] = Counter()
    rows = InferenceServiceVerdict.objects.filter(cluster__in=clusters).values_list(
        "cluster_id", "first_verdict", "current_verdict"
    )
    for cluster_id, first, current in rows:
        counts[(cluster_id, _isvc_state(first, current))] += 1
    for cluster in clusters:
        for state in ISVC_STATES:
            family.add_metric([cluster.name, state], counts[(cluster.pk, state)])
    return family


def _delivery_families(clusters: Sequence[Cluster]) -> Iterator[Metric]:
    family = GaugeMetricFamily(
        "ome_webhook_deliveries", "Webhook deliveries in the log by receiver and status.", labels=["receiver", "status"]
    )
    oldest = GaugeMetricFamily(
        "ome_webhook_oldest_pending_seconds", "Age of the oldest delivery not yet delivered (0: none).", labels=[]
    )
    names = [cluster.name for cluster in clusters]
    seen = Delivery.objects.filter(cluster_name__in=names)
    grouped = seen.values("receiver__name", "status").annotate(n=Count("pk")).order_by("receiver__name", "status")
    for row in grouped:
        family.add_metric([row["receiver__name"], row["status"]], row["n"])
    pending = seen.filter(status__in=[Delivery.Status.PENDING, Delivery.Status.SENDING]).order_by("created_at").first()
    oldest.add_metric([], 0 if pending is None else (timezone.now() - pending.created_at).total_seconds())
    yield from (family, oldest)


def policy_families(scope: Scope) -> Iterator[Metric]:
    """Every family above, of the clusters `scope` reads whole."""
    clusters = list(Cluster.objects.filter(scope.q_whole("name")).order_by("name"))
    yield from _assertion_families(clusters)
    yield _isvc_family(clusters)
    yield from _delivery_families(clusters)
