"""The matrix page for a whole cluster: export links for every namespace, and the cluster a
reader chose stays chosen when another cluster is registered."""

from __future__ import annotations

import csv
import html
import io
import re

import pytest
from django.test import Client

from access.scope import SYSTEM
from core.web import namespace_from_token
from inventory.models import Cluster, Kind
from matching import home_namespace
from matrix.cells import OUT_OF_SCOPE
from matrix.counts import ACROSS, HOME, counted_rows, model_counts, whole_cluster_rows
from matrix.models import MatrixRow
from matrix.selectors import current_build

pytestmark = pytest.mark.django_db


def test_the_matrix_links_to_an_export_of_every_namespace_and_of_this_one(demo: Cluster, client: Client) -> None:
    body = client.get("/matrix/", {"namespace": "research"}).content.decode()

    assert 'href="/api/v1/matrix/cells/export.csv?cluster=demo&amp;reasons=true"' in body
    assert 'href="/api/v1/matrix/cells/export.json?cluster=demo&amp;reasons=true"' in body
    assert 'href="/api/v1/matrix/cells/export.csv?cluster=demo&amp;namespace=research&amp;reasons=true"' in body


def test_the_chosen_cluster_stays_chosen_when_another_is_registered(demo: Cluster, client: Client) -> None:
    client.get("/matrix/")
    Cluster.objects.create(name="aaa-new", source=Cluster.Source.MANIFESTS)

    response = client.get("/matrix/")

    assert response.context["cluster"] == demo


def counts_html(client: Client, namespace: str) -> str:
    return client.get("/matrix/counts/", {"cluster": "demo", "namespace": namespace}).content.decode()


def test_all_namespaces_lists_each_model_where_it_lives_and_a_namespace_that_decides_differently(
    demo: Cluster, client: Client
) -> None:
    response = client.get("/matrix/", {"namespace": "_all"})

    assert response.status_code == 200
    rows = MatrixRow.objects.filter(build=current_build(demo))
    shown = list(whole_cluster_rows(rows, scope=SYSTEM))
    grid = response.context["grid"]
    assert grid.rows_total == len(shown) > 50  # the whole cluster in one paginated list
    homes = [row for row in shown if row.namespace == home_namespace(row.model.key)]
    others = [row for row in shown if row.namespace != home_namespace(row.model.key)]
    assert homes
    assert others
    for row in others:  # a ClusterBaseModel shown again only where the namespace decides differently
        home = rows.get(model=row.model, namespace="")
        assert (home.outcome, home.selected_id, home.compatible, home.manual) != (
            row.outcome,
            row.selected_id,
            row.compatible,
            row.manual,
        )
    body = response.content.decode()
    assert '<option value="_all" selected>(all namespaces)</option>' in body
    assert 'data-s="research"' in body or 'data-s="team-a"' in body or 'data-s="_cluster"' in body


def test_all_namespaces_by_outcome_lists_each_model_once_where_it_lives(demo: Cluster, client: Client) -> None:
    response = client.get("/matrix/", {"namespace": "_all", "outcome": "no-runtime"})

    rows = MatrixRow.objects.filter(build=current_build(demo))
    differing = whole_cluster_rows(rows, scope=SYSTEM).exclude(HOME).filter(outcome="no-runtime")
    assert differing.exists()  # the demo has rows the grid shows and the count's list leaves out
    assert response.context["grid"].rows_total == counted_rows(rows, ACROSS).filter(outcome="no-runtime").count()


COUNT_LINK = re.compile(r'href="(/matrix/\?[^"]*outcome=[^"]*)"><(?:strong)[^>]*>(\d+)</strong>')


def listed(client: Client, link: str) -> int:
    """How many rows the matrix list `link` lists."""
    response = client.get(html.unescape(link))
    assert response.status_code == 200
    return int(response.context["grid"].rows_total)


@pytest.mark.parametrize("namespace", ["_all", "research", "_cluster"])
def test_every_count_of_the_matrix_equals_the_rows_its_link_lists(
    demo: Cluster, client: Client, namespace: str
) -> None:
    links = COUNT_LINK.findall(counts_html(client, namespace))

    assert len(links) == 3  # without a runtime, no match at all, manual-only only
    assert {link: listed(client, link) for link, _ in links} == {link: int(count) for link, count in links}


def test_the_fleet_counts_and_the_api_equal_the_rows_their_links_list(demo: Cluster, client: Client) -> None:
    fleet = client.get("/fleet/").content.decode()
    (api,) = client.get("/api/v1/fleet/").json()["clusters"]

    ((link, count),) = COUNT_LINK.findall(fleet)
    assert int(count) == api["models_without_runtime"] == listed(client, link) > 0
    for outcome in ("no-match", "manual-only"):
        field = "models_" + outcome.replace("-", "_")
        assert api[field] == listed(client, f"/matrix/?cluster=demo&namespace=_all&outcome={outcome}") > 0


def test_all_namespaces_shows_another_namespaces_runtime_as_an_empty_cell(demo: Cluster, client: Client) -> None:
    response = client.get("/matrix/", {"namespace": "_all", "cols": "all"})

    grid = response.context["grid"]
    serving = [runtime for runtime in grid.columns if runtime.kind == Kind.SERVING_RUNTIME]
    assert serving
    for row, cells in grid.rows:
        for cell in cells:
            if cell.runtime.kind == Kind.SERVING_RUNTIME and cell.runtime.namespace != row.namespace:
                assert cell.status == OUT_OF_SCOPE
    assert "<td class=o></td>" in response.content.decode()


def test_the_export_link_exports_what_the_page_shows(demo: Cluster, client: Client) -> None:
    body = client.get("/matrix/", {"namespace": "_all", "outcome": "no-runtime"}).content.decode()

    link = "/api/v1/matrix/cells/export.csv?cluster=demo&amp;namespace=_all&amp;outcome=no-runtime&amp;reasons=true"
    assert f'href="{link}"' in body
    exported = client.get(link.replace("&amp;", "&"))
    lines = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    shown = counted_rows(MatrixRow.objects.filter(build=current_build(demo)), ACROSS)
    expected = {(row.model.name, row.namespace) for row in shown.filter(outcome="no-runtime")}
    assert {(line["model_name"], namespace_from_token(line["namespace"])) for line in lines} == expected


def test_matrix_fleet_and_api_agree_on_the_counts_and_say_their_scope(demo: Cluster, client: Client) -> None:
    counts = model_counts(MatrixRow.objects.filter(build=current_build(demo)), ACROSS)
    assert counts.models > counts.without_runtime > counts.no_match > 0
    assert counts.manual_only > 0

    matrix = counts_html(client, "_all")
    fleet = client.get("/fleet/").content.decode()
    (api,) = client.get("/api/v1/fleet/").json()["clusters"]

    assert f"<strong>{counts.without_runtime}</strong> of {counts.models} models across the cluster" in matrix
    assert f"<strong>{counts.no_match}</strong> with no match at all" in matrix
    assert f"<strong>{counts.manual_only}</strong> with manual-only matches only" in matrix
    assert f"<td>{counts.models}</td>" in fleet
    assert (
        f'>{counts.without_runtime}</strong></a> <span class="muted">({counts.no_match}, {counts.manual_only})' in fleet
    )
    assert "across the cluster" in fleet
    assert (api["models"], api["models_where"]) == (counts.models, "across the cluster")
    assert (api["models_without_runtime"], api["models_no_match"], api["models_manual_only"]) == (
        counts.without_runtime,
        counts.no_match,
        counts.manual_only,
    )
    assert api["models_invalid"] == counts.invalid
    # One namespace's counts say so, and count that namespace's rows.
    research = model_counts(MatrixRow.objects.filter(build=current_build(demo)), "research")
    assert f"of {research.models} models in namespace research without a runtime" in counts_html(client, "research")
