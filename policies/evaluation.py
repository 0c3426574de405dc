"""Evaluating every enabled policy on a cluster after its matrix changes, and recording each
assertion's state: passing or failing since when, and the inventory change that broke or fixed
it. State changes and pick changes become webhook events (policies.notify).

`policies_evaluate` reads the whole cluster by design: it runs in a task (no reader), and an
assertion's state is the cluster's, whoever looks at it later; pages and the API filter what a
reader sees. `policy_check` (the check API) reads what its caller may read, as the what-if does.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

import matching
import matching.policy
from access.scope import SYSTEM, Scope
from inventory.models import Cluster
from inventory.selectors import resources_visible
from whatif.check import Item, check_views

from .models import AssertionState, PickSnapshot, Policy, PolicyBaseline
from .notify import Event, assertion_event, events_deliver, failure_records, pick_events
from .services import assertions_enabled

logger = logging.getLogger(__name__)


@dataclass
class EvaluationResult:
    cluster: str
    evaluated: int = 0
    failing: int = 0
    changed: list[str] = field(default_factory=list)
    picks_changed: int = 0


def cluster_labels(cluster: Cluster, scope: Scope) -> dict[matching.ObjectKey, Mapping[str, str]]:
    """metadata.labels of the cluster's objects the scope reads, for label selectors."""
    rows = (
        resources_visible(scope)
        .filter(cluster=cluster)
        .values_list("kind", "namespace", "name", "obj__metadata__labels")
    )
    return {
        (kind, namespace, name): {str(k): v for k, v in labels.items() if isinstance(v, str)}
        for kind, namespace, name, labels in rows
        if isinstance(labels, dict)
    }


def _baseline(cluster: Cluster, policy: Policy, verdicts: matching.policy.Verdicts) -> matching.policy.Baseline:
    """The picks when this policy version was first evaluated on the cluster (recorded now if never)."""
    stored, _created = PolicyBaseline.objects.get_or_create(
        cluster=cluster, policy=policy, version=policy.version, defaults={"data": verdicts.baseline().to_dict()}
    )
    return matching.policy.baseline_from_dict(stored.data)


def _outcomes(cluster: Cluster, verdicts: matching.policy.Verdicts) -> list[tuple[Policy, matching.policy.Outcome]]:
    by_policy: dict[int, list[matching.policy.Assertion]] = defaultdict(list)
    policies: dict[int, Policy] = {}
    for policy, assertion in assertions_enabled():
        by_policy[policy.pk].append(assertion)
        policies[policy.pk] = policy
    labels = cluster_labels(cluster, SYSTEM)
    found = []
    for pk, assertions in by_policy.items():
        needs_baseline = any(a.kind in matching.policy.BASELINE_ASSERTIONS for a in assertions)
        baseline = _baseline(cluster, policies[pk], verdicts) if needs_baseline else None
        outcomes = matching.policy.evaluate(
            assertions, verdicts, cluster=cluster.name, labels=labels, baseline=baseline
        )
        found += [(policies[pk], outcome) for outcome in outcomes]
    return found


def _record(
    cluster: Cluster, policy: Policy, outcome: matching.policy.Outcome, causes: Sequence[Any], version: int
) -> tuple[AssertionState, bool]:
    """Store the outcome; True when its passing state changed (or is new and failing)."""
    now = timezone.now()
    state = AssertionState.objects.filter(cluster=cluster, policy=policy, assertion=outcome.assertion.name).first()
    created = state is None
    values = {
        "kind": outcome.assertion.kind,
        "severity": outcome.assertion.severity,
        "policy_version": policy.version,
        "checked": outcome.checked,
        "namespaces": list(outcome.assertion.subjects.namespaces),
        "failures": failure_records(outcome),
        "note": outcome.note or "",
        "evaluated_at": now,
    }
    if state is not None and state.passing == outcome.passed:
        AssertionState.objects.filter(pk=state.pk).update(**values)
        return state, False
    change = {"passing": outcome.passed, "since": now, "inventory_version": version, "causes": list(causes)}
    state, _created = AssertionState.objects.update_or_create(
        cluster=cluster, policy=policy, assertion=outcome.assertion.name, defaults={**values, **change}
    )
    return state, not (created and outcome.passed)


def policies_evaluate(cluster: Cluster, *, causes: Sequence[Any] = ()) -> EvaluationResult:
    """Evaluate every enabled policy on the cluster as its inventory stands, record each
    assertion's state and queue the notifications of what changed. `causes`: the inventory
    changes of the matrix update that asked for it (named on states that change).

    Evaluations of one cluster run one at a time (a lock on its PickSnapshot, taken before the
    inventory is read; not on the cluster's row, which every inventory write updates), so an
    evaluation of an older inventory never records its states after a newer one."""
    result = EvaluationResult(cluster.name)
    events: list[Event] = []
    PickSnapshot.objects.get_or_create(cluster=cluster, defaults={"evaluated_at": timezone.now()})
    with transaction.atomic():
        snapshot = PickSnapshot.objects.select_for_update().get(cluster=cluster)
        version = Cluster.objects.values_list("inventory_version", flat=True).get(pk=cluster.pk)
        objects, _same = check_views(cluster, [], scope=SYSTEM)
        verdicts = matching.policy.Verdicts(objects)
        kept = []
        for policy, outcome in _outcomes(cluster, verdicts):
            state, changed = _record(cluster, policy, outcome, causes, version)
            kept.append(state.pk)
            result.evaluated += 1
            result.failing += 0 if outcome.passed else 1
            if changed:
                result.changed.append(outcome.assertion.ident)
                events.append(assertion_event(cluster, state, outcome))
        AssertionState.objects.filter(cluster=cluster).exclude(pk__in=kept).delete()
        picks = pick_events(cluster, _pick_changes(snapshot, verdicts, version), version, causes)
        result.picks_changed = len(picks)
        events += picks
    transaction.on_commit(lambda: events_deliver(events))
    logger.info(
        "cluster %s: %d assertion(s) evaluated, %d failing, %d changed, %d pick change(s)",
        cluster.name, result.evaluated, result.failing, len(result.changed), result.picks_changed,
    )  # fmt: skip
    return result


def _pick_changes(
    snapshot: PickSnapshot, verdicts: matching.policy.Verdicts, version: int
) -> dict[str, dict[str, Any]]:
    """Store this evaluation's picks in the cluster's snapshot and return the rows whose pick
    differs from the previous evaluation's (row -> before, after); none the first time."""
    now = {
        f"{matching.key_text(model)}@{namespace}": {
            "model": list(model), "namespace": namespace, "pick": list(row.pick) if row.pick else None,
            "score": row.score,
        }
        for (model, namespace), row in verdicts.rows.items()
    }  # fmt: skip
    before: dict[str, dict[str, Any]] = snapshot.picks
    snapshot.picks, snapshot.evaluated_at, snapshot.inventory_version = now, timezone.now(), version
    snapshot.save()
    return {
        key: {"before": before[key], "after": value}
        for key, value in now.items()
        if key in before and before[key]["pick"] != value["pick"]
    }


def policy_check(
    cluster: Cluster,
    items: Sequence[Item],
    assertions: Sequence[matching.policy.Assertion],
    *,
    prune: bool,
    scope: Scope,
) -> matching.policy.PolicySection:
    """`POST policies/check/`: the assertions on the cluster with the items applied, compared
    with the cluster as the reader sees it (also the baseline of pickUnchanged and
    decisionUnchanged)."""
    base, head = check_views(cluster, items, prune=prune, scope=scope)
    labels = cluster_labels(cluster, scope)
    head_labels = {**labels, **matching.policy.labels_of(items)}
    base_verdicts = matching.policy.Verdicts(base)
    before = matching.policy.evaluate(assertions, base_verdicts, cluster=cluster.name, labels=labels)
    after = matching.policy.evaluate(
        assertions, matching.policy.Verdicts(head), cluster=cluster.name, labels=head_labels,
        baseline=base_verdicts.baseline(),
    )  # fmt: skip
    changed = frozenset(value.key for _obj, value in items)
    return matching.policy.PolicySection(f"cluster {cluster.name}", after, before, changed)
