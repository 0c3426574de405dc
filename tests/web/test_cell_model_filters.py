"""The matrix page's model filters are the cell FilterSet's (matrix.filters.CellFilterSet), so the
page, the cells API and the exports filter alike: each keeps exactly the rows whose model the
inventory's model filter (inventory.filters.ModelFilterSet) keeps for the same value, every filter
the page's form sends is one the cells API takes, and the page's export link carries them."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory

from access.current import scope_of
from access.scope import SYSTEM
from inventory.filters import ModelFilterSet
from inventory.models import MODEL_KINDS, Cluster, Resource
from matrix.filters import CellFilterSet
from matrix.models import MatrixRow
from matrix.selectors import current_build, rows_visible
from tests.support.access import grant
from tests.web.conftest import SEED_MODEL
from web.grid import model_facets

pytestmark = pytest.mark.django_db

# A cell filter on the row's model -> the same filter of the inventory's model list.
SAME_AS = {
    "search": "search",
    "model_kind": "kind",
    "model_format": "model_format",
    "model_architecture": "model_architecture",
    "pipeline_class": "pipeline_class",
    "has_pipeline": "has_pipeline",
    "storage_scheme": "storage_scheme",
}
# The page's form fields that shape the grid rather than filter cells.
PRESENTATION = {"cols"}


@pytest.fixture
def reader(cluster: Cluster) -> User:
    user = User.objects.create_user("model-filter-reader")
    grant(user, "viewer", cluster=cluster.name)
    return user


def queries(cluster: Cluster) -> list[tuple[str, str]]:
    """Every value the page's drop-downs offer (storage schemes also without `://`), and more."""
    facets = model_facets(cluster, scope=SYSTEM)
    found = [(name, value) for name, values in facets.items() for value in values]
    found += [("storage_scheme", value.removesuffix("://")) for value in facets["storage_scheme"]]
    found += [("model_kind", kind) for kind in MODEL_KINDS]
    return [*found, ("has_pipeline", "true"), ("has_pipeline", "false"), ("search", "QWEN"), ("search", "llama-3")]


def test_each_model_filter_keeps_the_rows_whose_model_the_inventory_filter_keeps(
    cluster: Cluster, reader: User
) -> None:
    rows = MatrixRow.objects.filter(build=current_build(cluster))
    models = Resource.objects.filter(cluster=cluster, kind__in=MODEL_KINDS)
    every_model = set(rows.values_list("model", flat=True))
    narrowed = 0

    for name, value in queries(cluster):
        request = RequestFactory().get("/api/v1/matrix/cells/", {"cluster": cluster.name, name: value})
        request.user = reader
        cells = CellFilterSet(request.GET, queryset=rows_visible(scope_of(request)), request=request)
        assert cells.is_valid(), (name, value, cells.errors)
        inventory = ModelFilterSet({SAME_AS[name]: value}, queryset=models, request=request)
        assert inventory.is_valid(), (name, value, inventory.errors)

        kept = set(cells.qs.filter(build=current_build(cluster)).values_list("model", flat=True))
        expected = every_model & set(inventory.qs.values_list("pk", flat=True))

        assert kept == expected, (name, value)
        narrowed += bool(kept) and kept != every_model
    assert narrowed >= len(queries(cluster)) - 2  # at most `has_pipeline` finds all or none


def test_every_filter_the_page_sends_is_a_filter_of_the_cells_api(cluster: Cluster, client: Client) -> None:
    body = client.get("/matrix/").content.decode()

    form = re.search(r'<form id="matrix-filters".*?</form>', body, re.DOTALL)
    assert form is not None
    sent = set(re.findall(r'\bname="([^"]+)"', form[0]))

    assert set(SAME_AS) <= sent
    assert sent - PRESENTATION <= set(CellFilterSet.base_filters)


def test_the_export_link_carries_the_model_filters(cluster: Cluster, client: Client) -> None:
    query = {"namespace": "_all", "model_architecture": "Qwen2ForCausalLM", "storage_scheme": "hf", "search": "7b"}
    page = client.get("/matrix/", query)
    body = page.content.decode()

    link = re.search(r'href="(/api/v1/matrix/cells/export\.csv\?[^"]*model_architecture=[^"]*)"', body)
    assert link is not None, "no export link with the model filter"
    exported = client.get(link[1].replace("&amp;", "&"))
    lines = list(csv.DictReader(io.StringIO(b"".join(exported.streaming_content).decode())))
    shown = {row.model.pk for row, _cells in page.context["grid"].rows}
    exported_models = Resource.objects.filter(pk__in={int(line["model_id"]) for line in lines})

    assert "the model filters apart" not in body
    assert shown
    assert {model.pk for model in exported_models} == shown
    assert page.context["grid"].rows_total == len(shown)  # one page: the grid shows every row exported
    for model in exported_models:
        assert (model.model_architecture, model.storage_scheme) == ("Qwen2ForCausalLM", "hf://")
        assert "7b" in model.name.lower()


def test_the_cells_api_takes_the_model_filters_and_names_a_bad_value(cluster: Cluster, client: Client) -> None:
    query = {"storage_scheme": "pvc", "search": "IMAGE", "page_size": "1000", "reasons": "false"}
    page = client.get("/api/v1/matrix/cells/", query)
    bad = client.get("/api/v1/matrix/cells/", {"model_kind": "ServingRuntime"})

    assert page.status_code == 200
    assert {cell["model"]["name"] for cell in page.json()["results"]} == {SEED_MODEL}
    assert bad.status_code == 400
    assert "model_kind" in bad.content.decode()
