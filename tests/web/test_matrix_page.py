"""The matrix page: grid, filters, pagination, htmx fragments, counts, version polling, access."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.conf import settings
from django.test import Client, override_settings
from django.urls import reverse

from access.scope import SYSTEM
from inventory.models import Cluster, Resource
from inventory.sync import event_apply
from lint.selectors import lint_report_get
from matrix.models import MatrixBuild, MatrixRow
from matrix.paging import CELL_LISTS, CellList
from matrix.services import matrix_apply_changes
from tests.support.grid import grid_cells, grid_models
from tests.web.conftest import CATALOG_RUNTIME, SEED_MODEL, SEED_RUNTIME

MATRIX = "/matrix/"


def cell_class(html: str, model: str, runtime: str) -> str:
    """The status of a model's cell for a runtime, from the page's HTML."""
    cells = grid_cells(html)
    assert (model, runtime) in cells, f"no cell {model} x {runtime}"
    return cells[(model, runtime)].status


def row_models(html: str) -> list[str]:
    return grid_models(html)


def test_the_matrix_shows_models_as_rows_runtimes_as_columns_and_a_legend(client: Client, cluster: Cluster) -> None:
    response = client.get(MATRIX)

    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Compatibility matrix</h1>" in html
    for status in ("selected", "compatible", "manual-only", "excluded", "disabled"):
        assert f'<span class="swatch s-{status}"' in html
    assert "Models <strong>1\u201350</strong> of <strong>208</strong>" in html
    assert len(row_models(html)) == 50
    assert 'class="grid"' in html
    assert 'scope="col"' in html
    assert 'scope="row"' in html
    assert 'id="cell-reason"' in html
    assert 'aria-live="polite"' in html


def test_a_cell_is_a_bare_status_and_text_whose_row_and_column_name_it(
    client: Client, build: MatrixBuild, seed_model: Resource, seed_runtime: Resource
) -> None:
    response = client.get(MATRIX, {"search": "qwen-image"})

    html = response.content.decode()
    cells = grid_cells(html)
    score = MatrixRow.objects.get(build=build, model=seed_model, namespace="").selected_score
    seed = cells[(SEED_MODEL, SEED_RUNTIME)]
    assert (seed.status, seed.text, seed.model_id, seed.runtime_id) == (
        "excluded",
        "\u00b7",
        seed_model.pk,
        seed_runtime.pk,
    )
    assert (cells[(SEED_MODEL, CATALOG_RUNTIME)].status, cells[(SEED_MODEL, CATALOG_RUNTIME)].text) == (
        "selected",
        str(score),
    )
    # What site.js turns into the cell's link: the prefix and the scope, once per table.
    prefix = reverse("matrix:cell", args=[1, 1, "x"]).removesuffix("1/1/x/")
    assert f'data-cells="{prefix}" data-scope="_cluster"' in html
    assert client.get(f"{prefix}{seed_model.pk}/{seed_runtime.pk}/_cluster/").status_code == 200
    # Every cell is nothing but its status letter and its text: no attribute repeats per cell.
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    tds = re.findall(r"<td[^>]*>[^<]*</td>", body)
    assert len(tds) == len(cells) == body.count("<td")
    assert all(re.fullmatch(r"<td class=[scmxd]>(\d+|M|\u2013|\u00b7)</td>", td) for td in tds)


def test_the_search_and_the_model_filters_narrow_the_rows(client: Client, cluster: Cluster) -> None:
    assert row_models(client.get(MATRIX, {"search": "qwen-image"}).content.decode()) == [
        "qwen-image",
        "qwen-image-edit",
        "qwen-image-edit-plus",
        SEED_MODEL,
    ]
    assert row_models(client.get(MATRIX, {"pipeline_class": "QwenImagePipeline"}).content.decode()) == ["qwen-image"]
    assert row_models(client.get(MATRIX, {"model_format": "diffusers", "has_pipeline": "false"}).content.decode()) == [
        SEED_MODEL
    ]
    assert row_models(client.get(MATRIX, {"storage_scheme": "pvc", "search": "qwen"}).content.decode()) == [SEED_MODEL]
    assert row_models(client.get(MATRIX, {"model_architecture": "QwenImagePipeline"}).content.decode()) == [
        "qwen-image",
        SEED_MODEL,
    ]
    base_models = row_models(client.get(MATRIX, {"model_kind": "BaseModel", "namespace": "team-b"}).content.decode())
    assert base_models == ["qwen3-30b-a3b-fp8"]


def test_the_runtimes_shown_are_those_relevant_to_the_models_or_all_of_them(client: Client, cluster: Cluster) -> None:
    relevant = client.get(MATRIX, {"search": "qwen-image"}).content.decode()
    everything = client.get(MATRIX, {"search": "qwen-image", "cols": "all"}).content.decode()

    # The pipeline runtime is shown for the seed model's class even where it matches nothing else.
    assert "Runtimes <strong>1\u20133</strong> of <strong>3</strong> relevant" in relevant
    assert re.search(r"Runtimes <strong>1\u201360</strong> of <strong>2\d\d</strong> in scope", everything)
    assert "Next runtimes" in everything


def test_the_status_filter_keeps_rows_and_runtimes_with_such_a_cell(client: Client, cluster: Cluster) -> None:
    html = client.get(
        MATRIX, {"status": "manual-only", "namespace": "team-b", "search": "llama-3-1-8b"}
    ).content.decode()

    assert row_models(html) == ["llama-3-1-8b-instruct"]
    assert {cell.status for cell in grid_cells(html).values()} == {"manual-only"}


def test_the_outcome_filter_lists_the_models_with_no_runtime(client: Client, build: MatrixBuild) -> None:
    html = client.get(MATRIX, {"outcome": "no-runtime"}).content.decode()

    expected = MatrixRow.objects.filter(build=build, namespace="", outcome="no-runtime").count()
    assert f"of <strong>{expected}</strong>" in html
    assert "→ " not in html.split("<tbody>")[1]


def test_the_outcome_filter_tells_no_match_at_all_from_manual_only_matches(client: Client, build: MatrixBuild) -> None:
    rows = MatrixRow.objects.filter(build=build, namespace="team-b", outcome="no-runtime")
    manual_only = [row.model.name for row in rows if row.manual]
    no_match = [row.model.name for row in rows if not row.manual]
    assert manual_only
    assert no_match

    manual_html = client.get(MATRIX, {"namespace": "team-b", "outcome": "manual-only"}).content.decode()
    no_match_html = client.get(MATRIX, {"namespace": "team-b", "outcome": "no-match"}).content.decode()

    assert f"of <strong>{len(manual_only)}</strong>" in manual_html
    assert f"of <strong>{len(no_match)}</strong>" in no_match_html
    manual_rows = manual_html.split("<tbody>")[1]
    assert "manual-only matches</span>" in manual_rows
    assert "no match at all" not in manual_rows
    assert "<td class=m>M</td>" in manual_rows  # the M cells sit next to the label that explains them
    no_match_rows = no_match_html.split("<tbody>")[1]
    assert "no match at all</span>" in no_match_rows
    assert "manual-only matches</span>" not in no_match_rows


def test_a_repeated_status_and_outcome_filtered_grid_is_counted_once(
    client: Client, build: MatrixBuild, measured_cell_lists: list[CellList]
) -> None:
    # outcome=no-match filters on `manual = []`: a JSON parameter (psycopg's Jsonb on PostgreSQL).
    query = {"namespace": "team-b", "outcome": "no-match", "status": ["compatible", "manual-only"]}
    bounds = {**settings.CACHE_ENTRIES, "cell_lists": len(CELL_LISTS) + 10}

    with override_settings(CACHE_ENTRIES=bounds):
        held = len(CELL_LISTS)
        for _ in range(2):
            assert client.get(MATRIX, query).status_code == 200

    assert len(measured_cell_lists) == 1
    assert len(CELL_LISTS) == held + 1


def test_a_namespace_adds_its_serving_runtimes(client: Client, cluster: Cluster) -> None:
    html = client.get(MATRIX, {"namespace": "team-b", "search": "qwen3-32b"}).content.decode()

    assert cell_class(html, "qwen3-32b", "vllm-qwen3-manual") == "manual-only"
    assert 'class="rt ns' in html


def test_pages_of_models_follow_each_other(client: Client, cluster: Cluster) -> None:
    first = row_models(client.get(MATRIX).content.decode())
    second_html = client.get(MATRIX, {"page": 2}).content.decode()

    assert "Models <strong>51\u2013100</strong> of <strong>208</strong>" in second_html
    assert not set(first) & set(row_models(second_html))
    assert "page=1" in second_html
    assert "page=3" in second_html


def test_an_htmx_request_gets_the_grid_fragment_only(client: Client, cluster: Cluster, htmx: dict[str, str]) -> None:
    response = client.get(MATRIX, {"search": "qwen-image"}, headers=htmx)

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section id="matrix"')
    assert "<html" not in html
    assert "<form" not in html
    # The fragment carries the version poller out of band, for the cluster it shows.
    assert 'hx-swap-oob="outerHTML:#matrix-version"' in html


def test_the_filter_form_updates_the_grid_with_htmx_and_works_without(client: Client, cluster: Cluster) -> None:
    html = client.get(MATRIX).content.decode()

    form = re.search(r'<form id="matrix-filters"[^>]+>', html).group(0)
    assert 'method="get"' in form
    assert 'action="/matrix/"' in form
    assert 'hx-get="/matrix/"' in form
    assert 'hx-target="#matrix"' in form
    assert 'hx-push-url="true"' in form


def test_unknown_filter_values_are_a_bad_request_shown_on_the_page(client: Client, cluster: Cluster) -> None:
    response = client.get(MATRIX, {"cluster": "nowhere"})

    assert response.status_code == 400
    assert "The filters are not valid" in response.content.decode()


def test_a_cluster_without_a_matrix_says_so(client: Client, cluster: Cluster) -> None:
    Cluster.objects.create(name="empty", source=Cluster.Source.MANIFESTS, manifests=[])

    response = client.get(MATRIX, {"cluster": "empty"})

    assert response.status_code == 200
    assert "has no matrix yet" in response.content.decode()


def test_without_any_cluster_the_page_says_how_to_add_one(client: Client, cluster: Cluster) -> None:
    Cluster.objects.all().delete()

    response = client.get(MATRIX)

    assert response.status_code == 200
    assert "No cluster is registered yet" in response.content.decode()


def test_the_counts_name_models_without_runtime_services_at_risk_and_lint_findings(
    client: Client, cluster: Cluster, build: MatrixBuild
) -> None:
    response = client.get(reverse("matrix:matrix-counts"), {"cluster": "demo", "namespace": "_cluster"})

    html = response.content.decode()
    rows = MatrixRow.objects.filter(build=build, namespace="", outcome="no-runtime")
    no_match, manual_only = rows.filter(manual=[]).count(), rows.exclude(manual=[]).count()
    assert no_match + manual_only == rows.count()
    assert manual_only > 0
    assert f"<strong>{no_match + manual_only}</strong> of 208 models in cluster scope without a runtime" in html
    assert f"<strong>{no_match}</strong> with no match at all" in html
    assert f"<strong>{manual_only}</strong> with manual-only matches only" in html
    assert "outcome=manual-only" in html
    assert re.search(r"<strong>\d+</strong> of 10 InferenceServices at risk", html)
    groups = lint_report_get(cluster, scope=SYSTEM).groups
    counted = re.search(
        r"<strong>(\d+)</strong> lint findings by root cause \((\d+) errors?, (\d+) warnings?, (\d+) info\)", html
    )
    assert counted
    assert [int(value) for value in counted.groups()] == [
        len(groups),
        *(sum(1 for group in groups if group.severity == name) for name in ("error", "warning", "info")),
    ]
    assert "outcome=no-match" in html
    assert "at_risk=1" in html


def test_the_version_poll_answers_no_content_until_the_matrix_changes(
    client: Client, cluster: Cluster, build: MatrixBuild, seed_model: Resource
) -> None:
    url = reverse("matrix:matrix-version")
    first = client.get(url, {"cluster": "demo", "since": "stale"})
    version = re.search(r'data-version="([^"]+)"', first.content.decode()).group(1)

    unchanged = client.get(url, {"cluster": "demo", "since": version})
    MatrixBuild.objects.filter(pk=build.pk).update(updated_at=build.finished_at.replace(year=2099))
    changed = client.get(url, {"cluster": "demo", "since": version})

    assert first.status_code == 200
    assert first["HX-Trigger"] == "matrix-changed"
    assert unchanged.status_code == 204
    assert changed.status_code == 200
    assert changed["HX-Trigger"] == "matrix-changed"
    assert f"since={version}" not in changed.content.decode()


def test_the_grid_refreshes_itself_when_the_matrix_changes(client: Client, cluster: Cluster) -> None:
    html = client.get(MATRIX, {"search": "qwen"}).content.decode()

    section = re.search(r'<section id="matrix"[^>]+>', html).group(0)
    assert 'hx-trigger="matrix-changed from:body"' in section
    assert "search=qwen" in section
    assert 'id="matrix-version"' in html
    assert 'hx-trigger="every 3s"' in html


def test_an_incremental_update_shows_on_the_next_render(client: Client, cluster: Cluster, seed_model: Resource) -> None:
    obj = dict(seed_model.obj)
    obj["spec"] = {
        **obj["spec"],
        "diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}},
    }
    event_apply(cluster, "MODIFIED", obj)
    matrix_apply_changes(
        cluster, [{"kind": "ClusterBaseModel", "namespace": "", "name": SEED_MODEL, "action": "changed"}]
    )

    html = client.get(MATRIX, {"search": "qwen-image"}).content.decode()

    assert cell_class(html, SEED_MODEL, SEED_RUNTIME) == "selected"
    assert cell_class(html, SEED_MODEL, CATALOG_RUNTIME) == "compatible"


def test_reads_need_a_login_when_anonymous_read_is_off(
    client: Client, cluster: Cluster, settings: Any, viewer: Any
) -> None:
    settings.API_ANONYMOUS_READ = False

    anonymous = client.get(MATRIX)
    client.force_login(viewer)
    signed_in = client.get(MATRIX)

    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/accounts/login/?next=/matrix/")
    assert signed_in.status_code == 200


@pytest.mark.parametrize("path", ["/matrix/", "/inferenceservices/", "/lint/", "/sync/"])
def test_pages_load_nothing_from_other_hosts(client: Client, cluster: Cluster, path: str) -> None:
    html = client.get(path).content.decode()

    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources
    assert all(not re.match(r"^(https?:)?//", url) for url in sources), [u for u in sources if "//" in u]
    assert "/static/django_htmx/htmx" in html
    assert "/static/js/site.js" in html


def test_the_status_filter_follows_an_incremental_update(
    client: Client, cluster: Cluster, seed_model: Resource
) -> None:
    """The rows with a cell in the statuses are found once per build generation: a change shows."""
    query = {"search": "qwen-image", "status": "compatible"}
    assert SEED_MODEL not in row_models(client.get(MATRIX, query).content.decode())
    obj = dict(seed_model.obj)
    obj["spec"] = {
        **obj["spec"],
        "diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}},
    }
    event_apply(cluster, "MODIFIED", obj)
    matrix_apply_changes(
        cluster, [{"kind": "ClusterBaseModel", "namespace": "", "name": SEED_MODEL, "action": "changed"}]
    )

    assert SEED_MODEL in row_models(client.get(MATRIX, query).content.decode())
