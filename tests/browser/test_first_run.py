"""A newcomer's first run, in headless Chromium under `make run`'s settings (DEBUG and anonymous
reads on; pytest-django turns DEBUG off unless a test turns it back on): the sign-in page says
where the demo password is, and a what-if with bad input answers in place, the edit kept, even
though django-htmx's debug script (loaded under DEBUG only) takes every 400 for an error page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from inventory.models import Cluster, Resource

pytestmark = pytest.mark.browser


@pytest.fixture
def make_run_settings(settings: Any) -> None:
    settings.DEBUG = True
    settings.API_ANONYMOUS_READ = True


def test_the_sign_in_page_says_where_make_runs_demo_password_is(
    make_run_settings: None, live_server: Any, transactional_db: None, page: Page
) -> None:
    page.goto(f"{live_server.url}/accounts/login/")

    expect(page.locator("#demo-password")).to_contain_text("the box that ends its start-up output")
    expect(page.locator("script[src*='django-htmx.js']")).to_have_count(1)  # DEBUG's debug script is there


@pytest.mark.parametrize(
    ("edit", "error"),
    [
        (("modelFormat:", "modelSizeRnage: {min: 1B}\n    modelFormat:"), "modelSizeRnage: unknown field"),
        (("spec:", "spec:\n  priority: high"), "spec.priority"),
        (("spec:", "spec: [unclosed"), "YAML"),
    ],
    ids=["typo", "wrong-type", "broken-yaml"],
)
def test_a_what_if_with_bad_input_answers_in_place_and_keeps_the_edit_under_debug(
    make_run_settings: None, live_server: Any, live_cluster: Cluster, page: Page, edit: tuple[str, str], error: str
) -> None:
    runtime = Resource.objects.filter(cluster=live_cluster, kind="ClusterServingRuntime").order_by("name").first()
    assert runtime is not None
    page.goto(f"{live_server.url}/runtimes/{runtime.pk}/")
    manifest = page.locator("#id_manifest")
    edited = manifest.input_value().replace(*edit, 1)
    manifest.fill(edited)

    page.get_by_role("button", name="Show what would change").click()

    expect(page.locator("#whatif .error").first).to_contain_text(error)
    expect(page.locator("header.site-header")).to_be_visible()  # the page, not a bare fragment
    expect(page.locator("link[rel=stylesheet]")).to_have_count(1)
    expect(manifest).to_have_value(edited)


def test_arrow_keys_browse_a_filter_select_and_enter_applies_it_to_the_url(
    live_server: Any, live_cluster: Cluster, page: Page
) -> None:
    page.goto(f"{live_server.url}/matrix/?cluster=live")
    select = page.locator("#id_namespace")
    select.focus()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url) if "/matrix/?" in request.url else None)

    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    browsed = select.input_value()
    page.keyboard.press("Enter")

    expect(page).to_have_url(re.compile(rf"namespace={browsed}"))
    expect(page.locator("#matrix table.grid caption")).to_contain_text(f"namespace {browsed}")
    assert browsed != "_cluster"
    assert [url for url in requests if "namespace=" in url] == [page.url]  # one filtering, not one per key
