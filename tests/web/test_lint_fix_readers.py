"""A reader of some namespaces sees a lint fix only when everything it changes and moves is theirs."""

from __future__ import annotations

import dataclasses

import pytest

import matching
from access.models import Role
from access.scope import SYSTEM, Scope
from inventory.models import Cluster, Resource
from lint.rules.proofs import Move
from lint.selectors import FIX_HIDDEN, _fixes_readable, _named, lint_report_get

pytestmark = pytest.mark.django_db


def namespace_readers(cluster: Cluster) -> list[Scope]:
    namespaces = Resource.objects.filter(cluster=cluster).exclude(namespace="").values_list("namespace", flat=True)
    return [Scope(namespaces={cluster.name: {namespace: Role.VIEWER}}) for namespace in sorted(set(namespaces))]


def test_every_fix_a_namespace_reader_sees_names_only_what_they_read(proven_demo: Cluster) -> None:
    readers = namespace_readers(proven_demo)
    shown = 0
    for scope in readers:
        for group in lint_report_get(proven_demo, scope=scope, proven=True).groups:
            named = _named(
                group.fix, group.proof, group.pair, group.partner, group.alternative, group.alternative_proof
            )
            assert scope.keys_visible(proven_demo.name, named), (scope, group.key, named)
            shown += group.fix is not None

    assert len(readers) > 1
    assert shown, "some reader should see a fix"


def test_a_fix_whose_proof_moves_a_model_of_an_unread_namespace_is_withheld_with_the_reason(
    proven_demo: Cluster,
) -> None:
    group = next(group for group in lint_report_get(proven_demo, scope=SYSTEM, proven=True).groups if group.proof)
    assert group.proof is not None
    elsewhere = ("BaseModel", "team-b", "a-model-of-team-b")
    moved = dataclasses.replace(
        group, proof=dataclasses.replace(group.proof, moves=(Move(elsewhere, None, None, 1, matching.LOSSES),))
    )
    team_a, team_b = (Scope(namespaces={proven_demo.name: {ns: Role.VIEWER}}) for ns in ("team-a", "team-b"))

    withheld = _fixes_readable(team_a, proven_demo.name, moved)

    assert (withheld.fix, withheld.proof, withheld.pair, withheld.partner, withheld.alternative) == (None,) * 5
    assert withheld.no_fix == FIX_HIDDEN
    assert _fixes_readable(team_b, proven_demo.name, moved) == moved
    assert _fixes_readable(SYSTEM, proven_demo.name, moved) == moved
