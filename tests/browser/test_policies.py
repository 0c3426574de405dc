"""The Policies page in headless Chromium: the demo's policies on the live demo cluster, the
seed assertion failing with OME's reason, fixed by the one-click patch, and the page naming the
change that fixed it with a link to the patch's audit record."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect

from inventory.models import Cluster
from policies.evaluation import policies_evaluate
from policies.services import policies_load_files
from tests.browser.test_seed_case import EXCLUDED_REASON, make_user, sign_in_to_patch_preview

pytestmark = pytest.mark.browser

SEED_ROW = "#assertion-research-diffusion-qwen-image-pvc-on-pipeline-runtime"


def test_the_policies_page_shows_the_seed_assertion_failing_then_fixed_by_the_one_click_patch(
    live_server: Any, live_cluster: Cluster, page: Page, django_user_model: Any, screenshot: Callable[..., None]
) -> None:
    policies_load_files([Path(settings.BASE_DIR) / "demo/policies"])
    policies_evaluate(live_cluster)
    make_user(django_user_model, "platform", may_patch=True)
    base = live_server.url

    page.goto(f"{base}/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Policies").click()
    expect(page.get_by_role("heading", name="Policies", exact=True)).to_be_visible()
    expect(page.locator("#policy-summary")).to_have_text("12 assertions, 1 failing.")
    expect(page.locator(SEED_ROW)).to_have_class("assertion failing")
    expect(page.locator(f"{SEED_ROW} + tr.failures")).to_contain_text(EXCLUDED_REASON)
    screenshot(page, "policies-failing", docs=True, full_page=True)

    sign_in_to_patch_preview(page, base, live_cluster, "platform")
    page.get_by_role("button", name="Confirm: apply the patch").click()
    expect(page.locator("#outcome h1")).to_have_text("Patch applied")

    page.goto(f"{base}/policies/?cluster=live")
    expect(page.locator("#policy-summary")).to_have_text("12 assertions, 0 failing.")
    row = page.locator(SEED_ROW)
    expect(row).to_have_class("assertion passing")
    expect(row).to_contain_text("ClusterBaseModel qwen-image-pvc changed")
    screenshot(page, "policies-fixed", full_page=True)
    row.locator("a.patch-audit").click()
    expect(page.locator("#outcome h1")).to_have_text("Patch applied")
