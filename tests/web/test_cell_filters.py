"""The cell FilterSet shared by the matrix page and the cells API: filtering has no side effects
(the cluster, build and namespace check are one explicit step), and one reader never chooses
what only another may read, whoever bound the FilterSet first."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import RequestFactory
from pytest_django import Settings

from access.current import scope_of
from inventory.models import MODEL_KINDS, Cluster, Resource
from matrix.filters import CellFilterSet, CellSource, NamespaceUnknown
from matrix.models import MatrixRow
from matrix.selectors import current_build, rows_visible
from tests.support.access import grant


def bound(user: User, **query: str) -> CellFilterSet:
    request = RequestFactory().get("/api/v1/matrix/cells/", query)
    request.user = user
    return CellFilterSet(request.GET, queryset=rows_visible(scope_of(request)), request=request)


@pytest.fixture
def reader(cluster: Cluster) -> User:
    user = User.objects.create_user("whole-reader")
    grant(user, "viewer", cluster=cluster.name)
    return user


def test_filtering_has_no_side_effects_and_the_source_is_one_explicit_step(cluster: Cluster, reader: User) -> None:
    cells = bound(reader, cluster=cluster.name, namespace="nope")
    assert cells.is_valid(), cells.errors

    rows = list(cells.qs)  # filtering alone never raises, names no build and sets nothing

    assert rows == []
    assert not hasattr(cells, "build")
    with pytest.raises(NamespaceUnknown) as unknown:
        cells.source()
    assert "namespace 'nope' has no rows" in unknown.value.message
    assert "" in unknown.value.known
    assert "team-b" in unknown.value.known

    known = bound(reader, cluster=cluster.name, namespace="team-b")
    assert known.is_valid()
    source = known.source()
    assert source == CellSource(cluster, current_build(cluster))
    assert known.cell_list(source).count() > 0
    assert set(known.qs.values_list("namespace", flat=True)) == {"team-b"}


def test_a_readers_model_choices_are_their_own_whoever_bound_the_filterset_first(
    cluster: Cluster, reader: User, settings: Settings
) -> None:
    settings.API_ANONYMOUS_READ = False  # else every user reads everything
    namespaced = MatrixRow.objects.filter(cluster=cluster, model__namespace="team-b").values_list("model", flat=True)
    hidden = Resource.objects.get(pk=namespaced[0], kind__in=MODEL_KINDS)
    tenant = User.objects.create_user("team-a-reader")
    grant(tenant, "viewer", cluster=cluster.name, namespace="team-a")

    for first, second in ((reader, tenant), (tenant, reader)):
        one, other = bound(first, model=str(hidden.pk)), bound(second, model=str(hidden.pk))
        valid = {user.username: cells.is_valid() for user, cells in ((first, one), (second, other))}

        assert valid == {"whole-reader": True, "team-a-reader": False}
