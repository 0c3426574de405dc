"""The all-namespaces grid in a browser: a cell opens its row's namespace, and a cell of another
namespace's ServingRuntime (empty: OME never considers it there) opens nothing."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from inventory.models import Cluster


def test_a_cell_opens_its_rows_namespace_and_an_out_of_scope_cell_nothing(
    live_server: Any, live_cluster: Cluster, page: Page
) -> None:
    page.goto(f"{live_server.url}/matrix/?cluster=live&namespace=_all&cols=all")
    row = page.locator('table.grid tbody tr[data-s]:not([data-s="_cluster"])').first
    namespace = row.get_attribute("data-s")
    assert namespace
    empty = row.locator("td.o").first
    expect(empty).to_have_text("")
    empty.click()
    expect(page).to_have_url(re.compile(r"namespace=_all"))  # still the grid

    row.locator("td:not(.o)").first.click()

    expect(page).to_have_url(re.compile(rf"/cells/\d+/\d+/{namespace}/$"))
