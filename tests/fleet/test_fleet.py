"""The fleet: two copies of the demo cluster side by side, made to disagree on purpose (a
model's recorded metadata, a disabled runtime, another OME behaviour), on the page and in the API."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from pytest_django import Settings
from rest_framework.test import APIClient

from access.scope import SYSTEM
from fleet.compare import difference_reasons
from fleet.services import fleet_get
from inventory.models import Cluster, Kind, Resource
from inventory.sync import event_apply
from isvcs.services import isvc_at_risk, isvc_verdicts
from lint.selectors import lint_report_get
from matching import Runtime
from matrix.freshness import cluster_freshness
from matrix.models import MatrixRow
from matrix.selectors import current_build
from matrix.services import matrix_rebuild
from tests.support.demo import stored_demo

E5 = ("ClusterBaseModel", "", "e5-mistral-7b-instruct")


@pytest.fixture(autouse=True)
def _no_matrix_tasks(settings: Settings) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False


@pytest.fixture(scope="module")
def edge(demo: Cluster, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """A second copy of the demo cluster: the fleet starts out agreeing."""
    with stored_demo(django_db_blocker, tmp_path_factory.getbasetemp().parent, name="edge") as cluster:
        yield cluster


def change(cluster: Cluster, key: tuple[str, str, str], edit: Any) -> None:
    obj = copy.deepcopy(Resource.objects.get(cluster=cluster, kind=key[0], namespace=key[1], name=key[2]).obj)
    edit(obj["spec"])
    event_apply(cluster, "MODIFIED", obj)
    matrix_rebuild(cluster)


def pick_of(cluster: Cluster, key: tuple[str, str, str]) -> tuple[str, str, str]:
    row = MatrixRow.objects.select_related("selected").get(
        build=current_build(cluster), model__kind=key[0], model__name=key[2], namespace=""
    )
    return row.selected.key


def row_of(fleet: Any, key: tuple[str, str, str], namespace: str = "") -> Any:
    return next(row for row in fleet.rows if row.model == key and row.namespace == namespace)


@pytest.mark.django_db
def test_identical_clusters_agree_everywhere_and_share_the_reach(demo: Cluster, edge: Cluster) -> None:
    fleet = fleet_get(scope=SYSTEM)

    assert [item.name for item in fleet.clusters] == ["demo", "edge"]
    assert fleet.disagreeing == 0
    rows = MatrixRow.objects.filter(build=current_build(demo))
    namespaces = rows.values("namespace").distinct().count()
    once = [row for row in fleet.rows if row.everywhere]
    apart = {row.model for row in fleet.rows if row.model[0] == "ClusterBaseModel" and not row.everywhere}
    assert once
    assert all(row.model[0] == "ClusterBaseModel" and row.namespace == "" for row in once)
    assert len(fleet.rows) == rows.count() - len(once) * (namespaces - 1)
    # A model picked by a ServingRuntime of one namespace differs there: its rows stay apart.
    assert all(len({row.cells["demo"] for row in fleet.rows if row.model == model}) > 1 for model in apart)
    assert all(reach.clusters == 2 and not reach.differs for reach in fleet.reach)
    pick = pick_of(demo, E5)
    reach = next(item for item in fleet.reach if item.runtime == pick)
    picked = MatrixRow.objects.filter(build=current_build(demo), selected__name=pick[2])
    assert reach.models == {"demo": picked.values("model").distinct().count(), "edge": reach.models["demo"]}


@pytest.mark.django_db
def test_different_recorded_metadata_puts_the_model_first_with_the_reason(demo: Cluster, edge: Cluster) -> None:
    change(edge, E5, lambda spec: spec["modelFramework"].update(version="9.99.0"))

    fleet = fleet_get(scope=SYSTEM)

    assert fleet.rows[0].model == E5
    assert {row.model for row in fleet.rows if row.disagree} == {E5}
    row = row_of(fleet, E5)
    assert row.cells["demo"][0] == pick_of(demo, E5)
    assert row.cells["edge"] == (None, None, "no-runtime")
    assert fleet.reasons(row) == [
        "recorded metadata differs: modelFramework (demo: transformers 4.34.0 (Equal); edge: transformers 9.99.0 (Equal))"
    ]


@pytest.mark.django_db
def test_a_runtime_disabled_in_one_cluster_is_the_reason_and_its_reach_differs(demo: Cluster, edge: Cluster) -> None:
    pick = pick_of(demo, E5)
    change(edge, pick, lambda spec: spec.update(disabled=True))

    fleet = fleet_get(scope=SYSTEM)

    row = row_of(fleet, E5)
    assert row.disagree
    assert row.cells["edge"][0] != pick
    assert f"ClusterServingRuntime {pick[2]} differs: disabled (demo: False; edge: True)" in fleet.reasons(row)
    reach = next(item for item in fleet.reach if item.runtime == pick)
    assert reach.differs
    assert list(reach.models) == ["demo"]


@pytest.mark.django_db
def test_another_ome_behaviour_is_not_blamed_for_a_row_its_profile_does_not_change(
    demo: Cluster, edge: Cluster
) -> None:
    """Issue 33: "OME behaviour differs" only where the upgrade diff between the two profiles
    changes the row; a label that is no known profile changes nothing either."""
    change(edge, E5, lambda spec: spec["modelFramework"].update(version="9.99.0"))
    build = current_build(edge)
    assert build is not None
    build.ome_behaviour = "OME v1.3 profile"
    build.save(update_fields=["ome_behaviour"])

    reasons = fleet_get(scope=SYSTEM).reasons(row_of(fleet_get(scope=SYSTEM), E5))

    assert not [reason for reason in reasons if reason.startswith("OME behaviour differs")]
    assert reasons[0].startswith("recorded metadata differs: modelFramework (")


@pytest.mark.django_db
def test_counts_per_cluster_come_from_the_same_selectors_as_the_pages(demo: Cluster, edge: Cluster) -> None:
    change(edge, E5, lambda spec: spec["modelFramework"].update(version="9.99.0"))

    body = APIClient().get("/api/v1/fleet/").json()

    counts = {item["cluster"]: item for item in body["clusters"]}
    homes = MatrixRow.objects.filter(build=current_build(demo), namespace="", model__kind=Kind.CLUSTER_BASE_MODEL)
    home_rows = homes.count() + MatrixRow.objects.filter(build=current_build(demo), model__kind=Kind.BASE_MODEL).count()
    assert counts["demo"]["models"] == home_rows
    assert counts["edge"]["models_without_runtime"] == counts["demo"]["models_without_runtime"] + 1
    verdicts = isvc_verdicts(demo, scope=SYSTEM)
    assert counts["demo"]["isvcs"] == len(verdicts) == 10
    assert counts["demo"]["isvcs_at_risk"] == sum(1 for verdict in verdicts if isvc_at_risk(verdict))
    assert counts["demo"]["lint"] == lint_report_get(demo, scope=SYSTEM).counts()
    assert counts["demo"]["sync"]["state"] == "listed"  # a manifest cluster has no watch
    assert counts["demo"]["sync"]["age_seconds"] is not None


@pytest.mark.django_db
def test_the_api_pages_rows_disagreeing_first_and_gives_each_runtime_reach(demo: Cluster, edge: Cluster) -> None:
    change(edge, E5, lambda spec: spec["modelFramework"].update(version="9.99.0"))
    api = APIClient()

    body = api.get("/api/v1/fleet/", {"only": "disagree"}).json()
    runtimes = api.get("/api/v1/fleet/runtimes/").json()

    # Once, not once per namespace: it says the same in cluster scope and the demo's three namespaces.
    assert body["count"] == 1 == body["disagreeing"]
    first = body["results"][0]
    assert first["same_in_every_namespace"] is True
    assert first["model"] == {"kind": "ClusterBaseModel", "namespace": "_cluster", "name": E5[2]}
    assert first["clusters"]["edge"] == {"outcome": "no-runtime", "pick": None, "score": None}
    assert first["clusters"]["demo"]["pick"]["name"] == pick_of(demo, E5)[2]
    assert first["reasons"][0].startswith("recorded metadata differs: modelFramework")
    assert runtimes["clusters"] == ["demo", "edge"]
    top = runtimes["runtimes"][0]
    assert top["clusters"] == 2
    assert top["models"] == sum(top["models_by_cluster"].values())


@pytest.mark.django_db
def test_the_page_shows_both_clusters_and_the_reason(demo: Cluster, edge: Cluster) -> None:
    change(edge, E5, lambda spec: spec["modelFramework"].update(version="9.99.0"))

    response = Client().get("/fleet/", {"only": "disagree"})

    assert response.status_code == 200
    text = response.content.decode()
    assert text.count('class="risk disagree"') == 1
    assert "same in every namespace" in text
    assert (
        "recorded metadata differs: modelFramework (demo: transformers 4.34.0 (Equal); edge: transformers 9.99.0"
        in text
    )
    assert '<a href="/fleet/" aria-current="page">Fleet</a>' in text
    runtimes = Client().get("/fleet/", {"view": "runtimes"}).content.decode()
    assert "Where each runtime is OME's pick" in runtimes


@pytest.mark.django_db
def test_the_page_and_the_api_say_each_clusters_freshness_as_every_other_surface(
    demo: Cluster, edge: Cluster, settings: Settings
) -> None:
    settings.MATRIX_LAG_STALE_AFTER = 0  # a change the matrix does not hold is stale at once
    obj = copy.deepcopy(Resource.objects.get(cluster=edge, kind=E5[0], name=E5[2]).obj)
    obj["spec"]["modelFramework"]["version"] = "9.99.0"
    event_apply(edge, "MODIFIED", obj)  # the matrix update is lost: no rebuild
    edge.refresh_from_db()
    judged = cluster_freshness(edge)
    assert judged.state == "stale"

    body = APIClient().get("/api/v1/fleet/").json()
    text = Client().get("/fleet/").content.decode()

    by_name = {counts["cluster"]: counts["freshness"] for counts in body["clusters"]}
    assert by_name["edge"] == judged.to_dict()
    assert by_name["demo"]["state"] == cluster_freshness(demo).state == "live"
    assert f'<td class="freshness-stale">stale: {judged.reasons[0]}' in text


@pytest.mark.django_db
def test_reads_need_a_login_when_anonymous_reads_are_off(demo: Cluster, settings: Settings) -> None:
    settings.API_ANONYMOUS_READ = False

    assert Client().get("/fleet/").status_code == 302
    assert APIClient().get("/api/v1/fleet/").status_code == 401


def _runtime(name: str, created: str) -> Runtime:
    return Runtime(kind="ClusterServingRuntime", namespace="", name=name, created=created)


def test_equal_definitions_created_at_other_times_are_named_as_the_tie_break() -> None:
    a, b = ("ClusterServingRuntime", "", "a"), ("ClusterServingRuntime", "", "b")
    runtimes = {
        a: {"x": _runtime("a", "2026-01-01T00:00:00Z"), "y": _runtime("a", "2026-03-01T00:00:00Z")},
        b: {"x": _runtime("b", "2026-02-01T00:00:00Z"), "y": _runtime("b", "2026-02-01T00:00:00Z")},
    }

    reasons = difference_reasons(
        behaviours={"x": "p", "y": "p"},
        behaviour_changes=False,
        models={"x": None, "y": None},
        invalid={},
        picks=[a, b],
        runtimes=runtimes.__getitem__,
    )

    assert reasons == [
        "equal scores: OME takes the older runtime, and creation times differ "
        "(x: 2026-01-01T00:00:00Z; y: 2026-03-01T00:00:00Z)"
    ]


def test_a_runtime_missing_in_a_cluster_is_named() -> None:
    a = ("ClusterServingRuntime", "", "a")

    reasons = difference_reasons(
        behaviours={"x": "p", "y": "p"},
        behaviour_changes=False,
        models={"x": None, "y": None},
        invalid={},
        picks=[a],
        runtimes={a: {"x": _runtime("a", ""), "y": None}}.__getitem__,
    )

    assert reasons == ["ClusterServingRuntime a is not in y"]
