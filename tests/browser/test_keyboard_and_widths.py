"""Keyboard and narrow screens, in headless Chromium: every page reaches its main content in
two Tabs (the skip link), the matrix grid is one Tab stop with arrow keys inside, and at 390 px
and 1024 px the filters collapse, the check table keeps words whole and the InferenceServices
table fits the page without sideways scrolling (measured, not guessed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from inventory.models import Cluster, Resource
from tests.support.grid import cell_xpath

pytestmark = pytest.mark.browser

MODEL = "qwen-image-pvc"
RUNTIME = "srt-qwen-image-pipeline"
IN_MAIN = "() => !!document.activeElement.closest('main') && document.activeElement.tagName !== 'MAIN'"
IN_GRID = "() => !!document.activeElement.closest('table.grid')"


def page_paths(cluster: Cluster) -> dict[str, str]:
    model = Resource.objects.get(cluster=cluster, name=MODEL)
    runtime = Resource.objects.get(cluster=cluster, name=RUNTIME)
    return {
        "home": "/",
        "matrix": "/matrix/?cluster=live",
        "cell": f"/cells/{model.pk}/{runtime.pk}/_cluster/",
        "model": f"/models/{model.pk}/",
        "runtime": f"/runtimes/{runtime.pk}/",
        "inferenceservices": "/inferenceservices/?cluster=live",
        "lint": "/lint/?cluster=live",
        "history": "/history/?cluster=live",
        "sync": "/sync/",
        "patch preview": f"/models/{model.pk}/patch/?runtime={runtime.pk}",
    }


def tabs_until(page: Page, predicate: str, limit: int = 40) -> int | None:
    """Press Tab until `predicate` holds; the number of presses, or None within `limit`."""
    for count in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate(predicate):
            return count
    return None


def test_every_page_reaches_its_main_content_in_two_tabs(live_server: Any, live_cluster: Cluster, page: Page) -> None:
    counts = {}
    for name, path in page_paths(live_cluster).items():
        page.goto(live_server.url + path)
        page.keyboard.press("Tab")
        expect(page.locator(":focus")).to_have_text("Skip to content")
        page.keyboard.press("Enter")
        counts[name] = 1 + (tabs_until(page, IN_MAIN, limit=5) or 99)
    assert counts == dict.fromkeys(counts, 2), counts


def test_the_grid_is_one_tab_stop_with_arrow_keys_inside_and_a_skip_link(
    live_server: Any, live_cluster: Cluster, page: Page
) -> None:
    page.goto(f"{live_server.url}/matrix/?cluster=live&search=qwen-image")
    expect(page.locator("table.grid tbody tr")).to_have_count(4)

    # Two Tabs and Enter reach the grid: the second skip link.
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to the matrix")
    page.keyboard.press("Enter")
    assert page.evaluate(IN_GRID)
    first = page.locator("table.grid tbody tr").first.locator("td").first
    expect(first).to_be_focused()
    # Exactly one element of the grid is in the Tab order.
    assert page.locator('table.grid [tabindex="0"]').count() == 1
    focusable = page.evaluate(
        "() => [...document.querySelectorAll('table.grid a, table.grid [tabindex]')].filter(e => e.tabIndex >= 0).length"
    )
    assert focusable == 1

    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    second = page.locator("table.grid tbody tr").nth(1).locator("td").nth(1)
    expect(second).to_be_focused()
    label = second.get_attribute("aria-label") or ""
    assert " \u00d7 " in label
    assert label.split(":")[1].strip().split(",")[0] in {
        "selected",
        "compatible",
        "manual-only",
        "excluded",
        "disabled",
    }
    expect(page.locator("#cell-reason")).not_to_contain_text("Hover over or focus a cell")

    # Tab leaves the grid at once; Shift+Tab comes back to the same cell.
    page.keyboard.press("Tab")
    assert not page.evaluate(IN_GRID)
    page.keyboard.press("Shift+Tab")
    expect(second).to_be_focused()

    # Home goes to the row's first cell, ArrowLeft from there to the model's link.
    page.keyboard.press("Home")
    expect(page.locator("table.grid tbody tr").nth(1).locator("td").first).to_be_focused()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("table.grid tbody tr").nth(1).locator("th a")).to_be_focused()

    # Enter on a cell opens its explanation.
    page.locator(cell_xpath(MODEL, RUNTIME)).click()
    expect(page.locator("#cell-status")).to_have_text("excluded")


@pytest.mark.parametrize("width", [390, 1024])
def test_narrow_screens_collapse_filters_keep_words_whole_and_fit_the_services_table(
    live_server: Any, live_cluster: Cluster, page: Page, width: int, screenshot: Callable[..., None]
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    paths = page_paths(live_cluster)

    for name in ("matrix", "inferenceservices", "lint"):
        page.goto(live_server.url + paths[name])
        box = page.locator("details.filters-box")
        expect(box).to_have_count(1)
        assert box.evaluate("element => element.open") is False, name
        expect(box.locator("summary")).to_be_visible()

    page.goto(live_server.url + paths["inferenceservices"])
    widths = page.evaluate(
        "() => ({page: document.documentElement.scrollWidth, viewport: window.innerWidth,"
        " tables: [...document.querySelectorAll('table.isvcs')].map(t => [t.scrollWidth, t.parentElement.clientWidth])})"
    )
    assert widths["page"] <= widths["viewport"], widths
    assert widths["tables"]
    assert all(table <= container for table, container in widths["tables"]), widths
    screenshot(page, f"inferenceservices-{width}px")

    page.goto(live_server.url + paths["cell"])
    broken = page.evaluate(
        """() => {
          const broken = [];
          for (const cell of document.querySelectorAll('table.checks tbody th, table.checks tbody td')) {
            const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              for (const match of node.data.matchAll(/\\S+/g)) {
                if (match[0].length > 24) continue;  // a token wider than the column may wrap
                const range = document.createRange();
                range.setStart(node, match.index);
                range.setEnd(node, match.index + match[0].length);
                const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
                if (lines.size > 1) broken.push(match[0]);
              }
            }
          }
          return broken;
        }"""
    )
    screenshot(page, f"cell-{width}px", full_page=True)
    assert page.locator("table.checks").count() > 0
    assert broken == []
