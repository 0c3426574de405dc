"""The history, lint, InferenceServices and small fixes of issue 13, end to end in headless
Chromium against a live cluster served by the fake Kubernetes API."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from playwright.sync_api import Page, expect

from inventory.models import Cluster
from lint.models import LintAcknowledgement
from patches.models import PatchAttempt
from tests.browser.test_seed_case import PASSWORD, make_user, sign_in, sign_in_to_patch_preview

pytestmark = pytest.mark.browser

NO_RANGE_RUNTIME = "srt-deepseek-r1-distill-qwen-14b"


def test_a_patch_shows_in_the_history_as_one_group_linked_both_ways_with_its_audit_record(
    live_server: Any, live_cluster: Cluster, page: Page, django_user_model: Any, screenshot: Callable[..., None]
) -> None:
    make_user(django_user_model, "platform", may_patch=True)
    sign_in_to_patch_preview(page, live_server.url, live_cluster, "platform")
    page.get_by_role("button", name="Confirm: apply the patch").click()
    expect(page.locator("#outcome h1")).to_have_text("Patch applied")
    attempt = PatchAttempt.objects.get(result="applied")

    page.get_by_role("navigation", name="Main").get_by_role("link", name="History").click()
    group = page.locator("article.history-group").first
    expect(group).to_contain_text("ClusterBaseModel qwen-image-pvc changed")
    expect(group.locator("table.changed-fields")).to_contain_text("spec.diffusionPipeline")
    expect(group.locator("table.changed-fields")).to_contain_text('"className": "QwenImagePipeline"')
    expect(group).to_contain_text("(none)")
    screenshot(page, "history", docs=True)

    group.get_by_role("link", name=str(attempt.pk)).click()
    expect(page).to_have_url(f"{live_server.url}/patches/{attempt.pk}/")
    page.get_by_role("link", name="What this patch changed, in the matrix history").click()
    expect(page.locator("#patch-filter")).to_contain_text(f"Only what patch {attempt.pk}")
    expect(page.locator("article.history-group")).to_have_count(1)


def test_an_anonymous_visitor_of_a_patch_result_is_told_why_to_sign_in(
    live_server: Any, live_cluster: Cluster, page: Page
) -> None:
    page.goto(f"{live_server.url}/patches/12345/")

    expect(page.locator(".messages")).to_contain_text("Sign in to see patch 12345")
    expect(page.locator(".messages")).to_contain_text("shown to the user who applied it")
    expect(page.get_by_label("Username")).to_be_visible()


def test_a_lint_group_opens_its_fix_in_the_what_if_and_is_acknowledged_with_a_reason(
    live_server: Any, live_cluster: Cluster, page: Page, django_user_model: Any, screenshot: Callable[..., None]
) -> None:
    user = django_user_model.objects.create_user(username="ops", password=PASSWORD)
    user.user_permissions.add(Permission.objects.get(codename="acknowledge_finding", content_type__app_label="lint"))
    page.goto(f"{live_server.url}/accounts/login/?next=/lint/%3Fcluster%3Dlive")
    sign_in(page, "ops")

    group = page.locator(f'li[data-key="no-size-range:ClusterServingRuntime {NO_RANGE_RUNTIME}"]')
    expect(group.locator(".count-tag")).to_have_text("8 findings")
    expect(group.locator("dl.quirks")).to_contain_text("Q16")
    screenshot(page, "lint", docs=True)

    # A shadowed runtime's fix (disable it) opens in its what-if, filled in and evaluated. (A
    # shadowed runtime dedicated to a model of the cluster is given that model's size instead.)
    shadowed = page.locator('li[data-key^="shadowed:"]').filter(has_text="Fix: disable it").first
    shadowed.get_by_role("button", name="Open the fix in the what-if").click()
    assert "disabled: true" in page.locator("#id_manifest").input_value()
    expect(page.locator("#whatif")).to_be_visible()

    page.goto(f"{live_server.url}/lint/?cluster=live")
    group.locator("details.acknowledge summary").click()
    group.get_by_label("Why can it be hidden?").fill("generic runtime kept until the 14B rollout")
    group.get_by_role("button", name="Acknowledge").click()

    expect(page.locator(".messages")).to_contain_text("Acknowledged and hidden")
    expect(group).to_have_count(0)
    ack = LintAcknowledgement.objects.get()
    assert (ack.username, ack.reason) == ("ops", "generic runtime kept until the 14B rollout")
    page.get_by_label("show acknowledged").check()
    page.get_by_role("button", name="Filter").click()
    expect(group.locator(".ack-record")).to_contain_text("Acknowledged by ops")
    group.get_by_role("button", name="Show it again").click()
    expect(group.locator("details.acknowledge")).to_have_count(1)


def test_a_long_error_is_collapsed_per_runtime_not_a_wall(
    live_server: Any, live_cluster: Cluster, page: Page, screenshot: Callable[..., None]
) -> None:
    page.goto(f"{live_server.url}/inferenceservices/?cluster=live")

    height = page.evaluate("() => document.documentElement.scrollHeight")
    assert height < 4000, height
    row = page.locator('tr[data-isvc="team-b/llama-8b"]')
    listing = row.locator("details.excluded")
    summary = listing.locator("> summary")
    expect(summary).to_contain_text("excluded runtimes, one reason each")
    summary.click()
    entries = listing.locator("ul.excluded-list > li")
    assert entries.count() > 100
    first = entries.first.locator("details")
    expect(first.locator("p")).to_be_hidden()
    first.locator("summary").click()
    expect(first.locator("p")).to_contain_text("not in supported formats")
    screenshot(page, "inferenceservices-error-open")


def test_the_home_search_finds_models_and_runtimes_and_an_unknown_namespace_is_named(
    live_server: Any, live_cluster: Cluster, page: Page
) -> None:
    page.goto(live_server.url + "/")
    page.get_by_label("Find a model, runtime or InferenceService").fill("qwen-image-p")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("h1")).to_contain_text("qwen-image-p")
    page.get_by_role("link", name="qwen-image-pvc").click()
    expect(page.locator("h1")).to_contain_text("qwen-image-pvc")

    page.goto(f"{live_server.url}/matrix/?cluster=live&namespace=nope")
    expect(page.locator("#filter-error")).to_contain_text(
        "namespace 'nope' has no rows in the matrix of cluster 'live'"
    )
    expect(page.locator("#id_namespace")).to_have_value("nope")
    expect(page.locator("table.grid")).to_have_count(0)


@pytest.mark.parametrize("width", [390, 1440])
def test_the_copy_button_does_not_cover_the_command(
    live_server: Any, live_cluster: Cluster, page: Page, width: int
) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    model = live_cluster.resources.get(name="qwen-image-pvc")
    runtime = live_cluster.resources.get(name="srt-qwen-image-pipeline")
    page.goto(f"{live_server.url}/models/{model.pk}/patch/?runtime={runtime.pk}")

    command = page.locator("#kubectl").bounding_box()
    button = page.get_by_role("button", name="Copy").bounding_box()

    assert command is not None
    assert button is not None
    overlap_x = min(command["x"] + command["width"], button["x"] + button["width"]) - max(command["x"], button["x"])
    overlap_y = min(command["y"] + command["height"], button["y"] + button["height"]) - max(command["y"], button["y"])
    assert overlap_x <= 0 or overlap_y <= 0, (command, button)
