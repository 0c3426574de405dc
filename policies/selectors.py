"""What a reader sees of a cluster's assertion states: the states of the assertions that cover a
namespace they read (policies.visibility), with the failures among objects they may read (a
reader of some namespaces sees how many others there are, not which; a count over namespaces
they do not all read is withheld, saying so), the changes that flipped each state and, where a
patch made that change, its audit record. Scoped by the reader's scope, given explicitly."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q

from access.restrict import Action
from access.scope import Scope
from inventory.models import Cluster
from matrix.history import cause_key, cause_versions
from patches.models import PatchAttempt
from patches.selectors import patch_records_list

from .models import AssertionState
from .visibility import failures_shown, readable_by


@dataclass
class StateView:
    state: AssertionState
    failures: list[dict[str, Any]]
    hidden: int
    causes: list[dict[str, Any]]
    withheld: int = 0
    patches: list[PatchAttempt] = field(default_factory=list)

    @property
    def by_reason(self) -> list[tuple[str, list[str]]]:
        """The failures grouped by OME's reason (rows that share a cause shown once), in the
        order their first failure comes; the full texts stay in the API's `failures`."""
        groups: dict[str, list[str]] = {}
        for failure in self.failures:
            groups.setdefault(failure.get("reason") or "", []).append(failure["message"])
        return list(groups.items())

    def to_dict(self) -> dict[str, Any]:
        state = self.state
        return {
            "id": state.ident,
            "policy": state.policy.name,
            "policy_version": state.policy_version,
            "assertion": state.assertion,
            "kind": state.kind,
            "severity": state.severity,
            "state": "passing" if state.passing else "failing",
            "since": state.since,
            "checked": state.checked,
            "note": state.note,
            "failures": [{k: v for k, v in item.items() if k != "keys"} for item in self.failures],
            "failures_hidden": self.hidden,
            "failures_withheld": self.withheld,
            "changed_by": {
                "inventory_version": state.inventory_version,
                "changes": self.causes,
                "patches": [patch.pk for patch in self.patches],
            },
            "evaluated_at": state.evaluated_at,
        }


def _visible(scope: Scope, cluster: Cluster, state: AssertionState) -> tuple[list[dict[str, Any]], int]:
    """The failures the scope reads (their objects too), and how many are withheld (visibility)."""
    shown, withheld = failures_shown(
        readable_by(scope, cluster.name), state.kind, state.namespaces or (), state.failures
    )
    return [dict(item) for item in shown], withheld


def state_visible(scope: Scope, cluster: Cluster, state: AssertionState) -> bool:
    """A state of an assertion that covers some namespace the scope reads; one recorded before
    its namespaces were (null) to readers of the whole cluster."""
    readable = readable_by(scope, cluster.name)
    return readable.whole if state.namespaces is None else readable.reads_any(state.namespaces)


def _patches(cluster: Cluster, causes: Sequence[dict[str, Any]], scope: Scope, user: Any) -> list[PatchAttempt]:
    """The applied patches behind `causes` whose record the user may see (patch_records_list)."""
    wanted = Q(pk__in=[])
    for item in causes:
        kind, namespace, name = cause_key(item)
        if cause_versions(item):
            wanted |= Q(model_kind=kind, model_namespace=namespace, model_name=name,
                        new_resource_version__in=cause_versions(item))  # fmt: skip
    records = patch_records_list(scope, user)
    return list(records.filter(cluster_name=cluster.name, result=PatchAttempt.Result.APPLIED).filter(wanted))


def assertion_state_list(cluster: Cluster, *, scope: Scope, user: Any) -> list[StateView]:
    """The states of a cluster the scope reads (none of a cluster it does not), with the patch
    records behind their changes that `user` may see."""
    found = []
    for state in AssertionState.objects.restrict(scope, Action.VIEW).filter(cluster=cluster).select_related("policy"):
        if not state_visible(scope, cluster, state):
            continue
        failures, withheld = _visible(scope, cluster, state)
        causes = [item for item in state.causes if scope.keys_visible(cluster.name, [cause_key(item)])]
        found.append(StateView(state, failures, len(state.failures) - len(failures) - withheld, causes, withheld))
    for view in found:
        if view.causes:
            view.patches = _patches(cluster, view.causes, scope, user)
    return found
