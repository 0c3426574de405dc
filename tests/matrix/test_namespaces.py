"""matrix_namespaces narrows one cached read per build with `Scope.reads`: for every kind of
grant it must answer what `restrict` reads, the namespaces of the rows the scope sees."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from access.models import EVERY_CLUSTER, Role
from access.scope import SYSTEM, Scope
from inventory.models import Cluster
from matrix.selectors import matrix_build_get, matrix_namespaces, rows_visible

pytestmark = pytest.mark.django_db

# Where a role can be granted: everywhere, a whole cluster (this one, every one, another one),
# or a namespace of one (the cluster-scope "" included), of every cluster or of another one.
GRANTS: tuple[tuple[str, str | None, str | None], ...] = (
    ("everywhere", None, None),
    ("cluster", "demo", None),
    ("cluster", EVERY_CLUSTER, None),
    ("cluster", "elsewhere", None),
    ("namespace", "demo", "team-a"),
    ("namespace", "demo", ""),
    ("namespace", EVERY_CLUSTER, "team-b"),
    ("namespace", "elsewhere", "team-a"),
    ("namespace", "demo", "no-such-namespace"),
)


def scope_of(*grants: tuple[tuple[str, str | None, str | None], int]) -> Scope:
    everywhere = 0
    clusters: dict[str, int] = {}
    namespaces: dict[str, dict[str, int]] = {}
    for (kind, cluster, namespace), role in grants:
        if kind == "everywhere":
            everywhere = max(everywhere, role)
        elif namespace is None:
            clusters[str(cluster)] = max(clusters.get(str(cluster), 0), role)
        else:
            held = namespaces.setdefault(str(cluster), {})
            held[namespace] = max(held.get(namespace, 0), role)
    return Scope(everywhere=everywhere, clusters=clusters, namespaces=namespaces)


def scopes() -> list[Scope]:
    one = [scope_of((grant, role)) for grant, role in itertools.product(GRANTS, Role.values)]
    namespace_grants = [grant for grant in GRANTS if grant[0] == "namespace"]
    two = [scope_of((a, Role.VIEWER), (b, Role.PATCHER)) for a, b in itertools.combinations(namespace_grants, 2)]
    return [Scope(), SYSTEM, *one, *two]


def test_the_namespaces_of_a_build_are_those_of_the_rows_each_scope_reads(demo: Cluster, db: Any) -> None:
    build = matrix_build_get(demo)
    every = set(rows_visible(SYSTEM).filter(build=build).values_list("namespace", flat=True))
    assert {"", "team-a", "team-b"} <= every

    answers = set()
    for scope in scopes():
        visible = rows_visible(scope).filter(build=build).order_by("namespace").values_list("namespace", flat=True)
        expected = list(dict.fromkeys(visible))
        assert matrix_namespaces(build, scope=scope) == expected, scope
        answers.add(tuple(expected))
    assert len(answers) >= 4  # nothing, everything, and narrower sets in between


def test_a_build_read_with_its_cluster_lists_its_namespaces_without_a_query(
    demo: Cluster, db: Any, django_assert_num_queries: Any
) -> None:
    build = matrix_build_get(demo)
    matrix_namespaces(build, scope=SYSTEM)  # the build generation's read

    with django_assert_num_queries(0):
        matrix_namespaces(build, scope=Scope(namespaces={"demo": {"team-a": Role.VIEWER}}))
