"""The fleet page in headless Chromium: two clusters (the live demo served by the fake
Kubernetes API, and a manifest copy where one model's recorded metadata differs), reached
from the navigation; disagreeing rows first with the reason, the filter, the runtimes view."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from inventory.models import Cluster, Kind
from inventory.sync import record_list, snapshot_apply
from matching import parse_object
from matrix.services import matrix_rebuild

pytestmark = pytest.mark.browser

MODEL = "e5-mistral-7b-instruct"


@pytest.fixture
def edge(live_cluster: Cluster, demo_documents: list[dict[str, Any]], settings: Any) -> Cluster:
    """The demo again, stored as the fake API server stores it (no CRD defaults), with the
    model's framework recorded as another version."""
    settings.MATRIX_UPDATE_ON_CHANGE = False
    cluster = Cluster.objects.create(name="edge", source=Cluster.Source.MANIFESTS)
    by_kind: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = {kind: {} for kind in Kind.values}
    for document in demo_documents:
        obj = copy.deepcopy(document)
        if obj["kind"] == "ClusterBaseModel" and obj["metadata"]["name"] == MODEL:
            obj["spec"]["modelFramework"]["version"] = "9.99.0"
        by_kind[obj["kind"]][parse_object(obj).key] = obj
    for kind, objects in by_kind.items():
        snapshot_apply(cluster, kind, objects, prune=True)
        record_list(cluster, kind)
    matrix_rebuild(cluster)
    return cluster


def test_the_fleet_shows_where_clusters_disagree_and_why(
    live_server: Any, edge: Cluster, page: Page, screenshot: Callable[..., None]
) -> None:
    page.goto(f"{live_server.url}/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Fleet").click()

    expect(page.get_by_role("heading", name="Fleet", exact=True)).to_be_visible()
    clusters = page.locator("table.fleet-clusters thead th")
    expect(clusters).to_have_text(["Cluster", "edge", "live"])
    first = page.locator("table.fleet-models tbody tr").first
    expect(first).to_have_class("risk disagree")
    expect(first.locator("th")).to_contain_text(MODEL)
    expect(first.locator("td").nth(1)).to_have_text("no runtime")  # edge
    expect(first.locator("td.reason")).to_contain_text(
        "recorded metadata differs: modelFramework (edge: transformers 9.99.0; live: transformers 4.34.0)"
    )
    screenshot(page, "fleet", docs=True)

    page.get_by_label("Only rows where clusters disagree").check()
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("table.fleet-models tbody tr.disagree")).to_have_count(1)  # not once per namespace
    expect(page.locator("table.fleet-models tbody tr.disagree td").first).to_have_text("same in every namespace")
    expect(page.locator("table.fleet-models tbody tr:not(.disagree)")).to_have_count(0)

    page.get_by_role("link", name="Runtimes (").click()
    reach = page.locator("table.fleet-reach")
    expect(reach.locator("caption")).to_have_text("Where each runtime is OME's pick")
    expect(reach.locator("tbody tr").first.locator("td").first).to_have_text("2")
    screenshot(page, "fleet-runtimes")
