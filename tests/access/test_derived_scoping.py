"""Derived data is scoped by construction (issue 32, item 6): for every kind of grant (none; a
role on a cluster, on a namespace, on every cluster, on one namespace of every cluster; viewer,
patcher, admin; several at once), every derived answer a reader gets equals the answer computed
from the rows `restrict` gives that reader alone, in the authorization matrix's world.

Scope's Python predicate (`admits`, and `reads` on it) keeps exactly the rows `restrict` keeps,
for every action. Derived answers: the parsed inventory (`inventory_for`), the matrix's namespaces, the
InferenceService verdicts, and the policy states with their failures (a failure shows when every
object it names is a row the reader reads; a count over namespaces, pickCount, shows to readers
of the whole cluster only: docs/policies.md). The matrix's explanations (a cell's reason and
trace, the reasons' inventory of a build, a selection's exclusions, a runtime's matches, a
parsed object, the upgrade report's differences) equal those `matching` gives for an inventory
parsed from the reader's rows alone.
"""

from __future__ import annotations

import itertools
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given
from hypothesis import settings as examples
from hypothesis import strategies as st

import matching
from access.models import EVERY_CLUSTER, Grant, Role
from access.restrict import Action
from access.scope import Scope, scope_for_user
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Resource
from inventory.ome_release import judge
from inventory.parsed import Inventory, inventory_for
from isvcs.models import InferenceServiceVerdict
from isvcs.services import isvc_verdicts
from matrix.models import MatrixRow
from matrix.selectors import (
    build_inventory,
    cell_reason,
    cell_reason_in,
    cell_trace,
    current_build,
    matrix_namespaces,
    selection_exclusions,
)
from matrix.upgrade import upgrade_report
from policies.models import AssertionState
from policies.selectors import assertion_state_list
from tests.access.world import CLUSTERS, NAMESPACES, build_world
from web.rankings import parsed_object, runtime_matches

pytestmark = pytest.mark.django_db

NAMESPACE_CHOICES = ("", *itertools.chain.from_iterable(NAMESPACES.values()), "qxa-nowhere")
GRANT = st.tuples(
    st.sampled_from((Role.VIEWER, Role.PATCHER, Role.ADMIN)),
    st.sampled_from((*CLUSTERS, EVERY_CLUSTER)),
    st.sampled_from(NAMESPACE_CHOICES),
)
# Every kind of grant, alone or with others (a namespace of another cluster's name is a grant
# on nothing; a namespace grant on every cluster reads that namespace wherever it is).
EACH_KIND = [
    (role, cluster, namespace)
    for role in (Role.VIEWER, Role.PATCHER, Role.ADMIN)
    for cluster, namespace in ((CLUSTERS[0], ""), (CLUSTERS[0], NAMESPACES[CLUSTERS[0]][0]), (EVERY_CLUSTER, ""),
                               (EVERY_CLUSTER, NAMESPACES[CLUSTERS[0]][1]))
]  # fmt: skip
GRANTS = st.lists(GRANT, max_size=3, unique_by=lambda grant: grant[1:])


def keys(rows: Any) -> set[tuple[str, str, str]]:
    return set(rows.values_list("kind", "namespace", "name"))


def expected_failures(state: AssertionState, readable: set[tuple[str, str, str]], whole: bool) -> list[str]:
    """The failures a reader of `readable` sees, from rows alone: all of them for a reader of the
    whole cluster, else those whose objects are all readable and, for a count over namespaces,
    none (matching.policy.evaluate records it at cluster scope: ome-docs do not scope a count)."""
    if whole:
        return [item["message"] for item in state.failures]
    if state.kind == "pickCount":
        return []
    namespaces = {key[1] for key in readable}
    return [
        item["message"]
        for item in state.failures
        if item["namespace"] in namespaces and all(tuple(key) in readable for key in item["keys"])
    ]


def state_expected(state: AssertionState, readable: set[tuple[str, str, str]], whole: bool) -> bool:
    """A state shows to a reader of a namespace its assertion covers (rows alone: a namespace
    holding a row the reader reads; the world has objects in every namespace)."""
    if whole:
        return True
    namespaces = {key[1] for key in readable if key[1]}
    return bool(readable) and (
        not state.namespaces or any(fnmatchcase(ns, glob) for ns in namespaces for glob in state.namespaces)
    )


def rows_inventory(cluster: Cluster, scope: Scope) -> Inventory:
    """The reader's restrict-ed rows alone, parsed here by `matching`, under the cluster's profile."""
    alone = Inventory(cluster_id=cluster.pk, behaviour=judge(cluster).behaviour)
    for row in Resource.objects.restrict(scope, Action.VIEW).filter(cluster=cluster):
        alone.ids[row.key] = row.pk
        if row.error:
            alone.invalid[row.key] = row.error
        else:
            alone.put(row.key, matching.parse_object(row.obj))
    return alone


def exclusions_alone(alone: Inventory, model: tuple[str, str, str], namespace: str) -> dict[Any, str]:
    """The runtimes in scope of the namespace (its own and the cluster-scoped ones) that cannot
    serve the model, with OME's reason, from the reader's rows alone."""
    if model not in alone.models:
        return {}
    compatible = alone.grid.compatible_entries(model)
    return {
        key: alone.grid.reason(model, key) or ""
        for key, runtime in alone.runtimes.items()
        if (runtime.is_cluster or key[1] == namespace) and key not in compatible
    }


def check_explanations(cluster: Cluster, scope: Scope) -> None:
    """Every explanation the matrix gives the reader, for every object of the cluster (read or
    not) and every namespace, equals the one from the reader's rows alone."""
    alone = rows_inventory(cluster, scope)
    stored = list(Resource.objects.filter(cluster=cluster))
    models = [item.key for item in stored if item.kind in MODEL_KINDS]
    runtimes = [item for item in stored if item.kind in RUNTIME_KINDS]
    for model in models:
        for namespace in ("", *NAMESPACES[cluster.name]):
            assert selection_exclusions(cluster, model, namespace, scope=scope) == exclusions_alone(
                alone, model, namespace
            )
            for runtime in runtimes:
                assert cell_reason(cluster, model, runtime.key, namespace, scope=scope) == cell_reason_in(
                    alone, model, runtime.key, namespace
                )
        for runtime in runtimes:
            trace = cell_trace(cluster, model, runtime.key, scope=scope)
            readable = model in alone.models and runtime.key in alone.runtimes
            assert (trace is not None) == readable
            assert trace is None or trace.check.to_dict() == alone.grid.check(model, runtime.key).to_dict()
    for item in stored:
        assert parsed_object(cluster, item, scope=scope) == (alone.models.get(item.key) or alone.runtimes.get(item.key))
    for runtime in runtimes:
        entries, _picked = runtime_matches(cluster, runtime, scope=scope)
        matched = {entry.index: {found.pk for found in entry.models} for entry in entries if entry.models}
        expected: dict[int, set[int]] = {}
        for model in alone.models:
            index = alone.grid.compatible_entries(model).get(runtime.key)
            if index is not None:
                expected.setdefault(index, set()).add(alone.ids[model])
        assert matched == expected
    build = current_build(cluster)
    assert build is not None
    assert set(build_inventory(build, scope=scope).ids) == set(alone.ids)
    for other in matching.BEHAVIOURS:  # the upgrade report, to each profile
        report = upgrade_report(cluster, other, scope=scope)
        assert report.differences == matching.behaviour_diff(alone.grid, matching.as_behaviour(other), alone.invalid)
        assert report.ids == alone.ids


def check_cluster(cluster: Cluster, scope: Scope, user: Any, grants: list[tuple[int, str, str]]) -> None:
    readable = keys(Resource.objects.restrict(scope, Action.VIEW).filter(cluster=cluster))
    # A count over every namespace covers tomorrow's too: shown to a grant on the whole cluster.
    whole = any(on in (cluster.name, EVERY_CLUSTER) and not namespace for _role, on, namespace in grants)

    every = keys(Resource.objects.filter(cluster=cluster))
    for action in Action:  # the Python predicate and the SQL of Scope.q: one definition
        restricted = keys(Resource.objects.restrict(scope, action).filter(cluster=cluster))
        assert restricted == {key for key in every if scope.admits(cluster.name, key[1], role=action.value)}
    assert readable == {key for key in every if scope.reads(cluster.name, key[1])}

    assert set(inventory_for(cluster, scope=scope).ids) == readable
    check_explanations(cluster, scope)

    build = current_build(cluster)
    assert build is not None
    rows = MatrixRow.objects.restrict(scope, Action.VIEW).filter(build=build)
    assert sorted(matrix_namespaces(build, scope=scope)) == sorted(set(rows.values_list("namespace", flat=True)))

    verdicts = InferenceServiceVerdict.objects.restrict(scope, Action.VIEW).filter(cluster=cluster)
    assert {(v.namespace, v.name) for v in isvc_verdicts(cluster, scope=scope)} == set(
        verdicts.values_list("namespace", "name")
    )

    shown = {view.state.pk: [item["message"] for item in view.failures] for view in
             assertion_state_list(cluster, scope=scope, user=user)}  # fmt: skip
    stored = AssertionState.objects.restrict(scope, Action.VIEW).filter(cluster=cluster)
    expected = {state.pk: expected_failures(state, readable, whole) for state in stored
                if state_expected(state, readable, whole)}  # fmt: skip
    assert shown == expected


def test_every_derived_answer_equals_the_one_from_the_readers_rows_alone(
    tmp_path: Path, django_user_model: Any, settings: Any
) -> None:
    settings.API_ANONYMOUS_READ = False
    admin = django_user_model.objects.create_user("world-author", is_superuser=True)
    clusters = build_world(tmp_path, lambda _namespace: admin)
    made = itertools.count()
    kinds: set[tuple[int, bool, bool]] = set()

    @examples(max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(grants=GRANTS)
    def every_kind_of_grant(grants: list[tuple[int, str, str]]) -> None:
        user = django_user_model.objects.create_user(f"reader-{next(made)}")
        for role, cluster, namespace in grants:
            Grant.objects.create(user=user, role=role, cluster=cluster, namespace=namespace)
        scope = scope_for_user(user)
        kinds.update((role, cluster == EVERY_CLUSTER, bool(namespace)) for role, cluster, namespace in grants)
        for cluster in clusters:
            check_cluster(cluster, scope, user, grants)

    for kind in EACH_KIND:  # each kind alone at least once, whatever the random draws
        every_kind_of_grant = example(grants=[kind])(every_kind_of_grant)
    every_kind_of_grant()
    print(f"\nderived scoping: {next(made)} grant sets x {len(clusters)} clusters, {len(kinds)} kinds of grant")
    # Every kind: three roles, on one cluster or every cluster, whole or one namespace.
    assert len(kinds) == 12, sorted(kinds)
