"""The seed page's case end to end, in headless Chromium against the live server: a live cluster
served by the fake Kubernetes API, the matrix, the explanation of the excluded cell, the
one-click pipeline patch sent through the real client, and the matrix updating by itself;
plus a permission error and a conflict, shown plainly."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from playwright.sync_api import Page, expect

import matching
from inventory.models import Cluster, Resource
from matrix.models import MatrixRow
from patches.models import PatchAttempt
from tests.fakes.kube_api import FakeKubeAPI
from tests.support.access import grant
from tests.support.grid import cell_class, cell_xpath

pytestmark = pytest.mark.browser

MODEL = "qwen-image-pvc"
RUNTIME = "srt-qwen-image-pipeline"
CATALOG_RUNTIME = "srt-qwen-image"
PASSWORD = "correct horse battery staple"
EXCLUDED_REASON = "diffusion pipeline required by runtime but not specified in model"


def cell(page: Page, model: str, runtime: str) -> Any:
    """The matrix cell of one model and runtime."""
    return page.locator(cell_xpath(model, runtime))


def make_user(django_user_model: Any, username: str, *, may_patch: bool) -> Any:
    user = django_user_model.objects.create_user(username=username, password=PASSWORD)
    if may_patch:
        grant(user, "patcher")
    return user


def sign_in(page: Page, username: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def sign_in_to_patch_preview(page: Page, base: str, cluster: Cluster, username: str) -> None:
    """Sign in, landing on the patch preview of the seed case (the way there from the matrix is
    the first test's)."""
    model = Resource.objects.get(cluster=cluster, name=MODEL)
    runtime = Resource.objects.get(cluster=cluster, name=RUNTIME)
    page.goto(f"{base}/accounts/login/?next=/models/{model.pk}/patch/%3Fruntime%3D{runtime.pk}")
    sign_in(page, username)
    expect(page.locator("#merge-patch")).to_contain_text('"className": "QwenImagePipeline"')


def patch_requests(fake: FakeKubeAPI) -> list[Any]:
    return [r for r in fake.requests if r.method == "PATCH"]


def test_the_seed_case_is_fixed_in_one_click_and_the_matrix_updates_by_itself(
    live_server: Any,
    live_cluster: Cluster,
    fake_cluster: FakeKubeAPI,
    page: Page,
    django_user_model: Any,
    screenshot: Callable[..., None],
) -> None:
    make_user(django_user_model, "platform", may_patch=True)
    base = live_server.url

    page.goto(f"{base}/matrix/?cluster=live")
    expect(page.locator("table.grid")).to_be_visible()
    expect(page.locator("#matrix-counts .count").first).to_be_visible()
    screenshot(page, "matrix", docs=True)

    page.get_by_label("Search models").fill("qwen-image")
    expect(page.locator("tr[data-m]")).to_have_count(4)
    seed = cell(page, MODEL, RUNTIME)
    expect(seed).to_have_class(cell_class("excluded"))
    expect(cell(page, MODEL, CATALOG_RUNTIME)).to_have_class(cell_class("selected"))
    seed.hover()
    expect(page.locator("#cell-reason")).to_contain_text(EXCLUDED_REASON)
    screenshot(page, "matrix-seed-case", docs=True)

    # A second tab keeps the matrix open: it must update without a reload after the patch.
    watcher = page.context.new_page()
    watcher.goto(f"{base}/matrix/?cluster=live&search=qwen-image")
    expect(cell(watcher, MODEL, RUNTIME)).to_have_class(cell_class("excluded"))

    seed.click()
    expect(page.locator("#cell-status")).to_have_text("excluded")
    expect(page.locator("#ome-reason")).to_have_text(
        "model format 'mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0' not in supported "
        "formats: diffusion pipeline required by runtime but not specified in model"
    )
    screenshot(page, "cell", docs=True, full_page=True)

    page.get_by_role("button", name="Make this model match").click()
    expect(page.locator("#merge-patch")).to_contain_text('"transformer"')
    expect(page.locator("#kubectl")).to_have_text(
        "kubectl patch clusterbasemodel qwen-image-pvc --type merge -p "
        '\'{"spec":{"diffusionPipeline":{"className":"QwenImagePipeline","transformer":{"library":"diffusers"}}}}\''
    )
    # The fake API server applies no CRD defaults (weights), so the scores are computed here.
    picked = MatrixRow.objects.get(build__cluster=live_cluster, model__name=MODEL, namespace="")
    winner = matching.score(
        fake_cluster.get("clusterbasemodels", MODEL), fake_cluster.get("clusterservingruntimes", RUNTIME)
    )
    expect(page.locator(".pick-change").first).to_contain_text(
        f"{CATALOG_RUNTIME} ({picked.selected_score}) \u2192 {RUNTIME} ({winner})"
    )
    screenshot(page, "patch-preview", docs=True, full_page=True)

    page.get_by_role("link", name="Sign in to apply").click()
    sign_in(page, "platform")
    page.get_by_role("button", name="Confirm: apply the patch").click()

    expect(page.locator("#outcome h1")).to_have_text("Patch applied")
    expect(cell(page, MODEL, RUNTIME)).to_have_class(cell_class("selected"))
    screenshot(page, "patch-applied", docs=True, full_page=True)
    sent = patch_requests(fake_cluster)
    assert len(sent) == 1
    assert sent[0].headers["content-type"] == "application/merge-patch+json"
    body = sent[0].body
    assert body["spec"] == {
        "diffusionPipeline": {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}
    }
    assert body["metadata"]["resourceVersion"]
    assert fake_cluster.get("clusterbasemodels", MODEL)["spec"]["diffusionPipeline"]["className"] == "QwenImagePipeline"

    expect(cell(watcher, MODEL, RUNTIME)).to_have_class(cell_class("selected"), timeout=10_000)
    watcher.close()

    page.goto(f"{base}/matrix/?cluster=live&search=qwen-image")
    expect(cell(page, MODEL, RUNTIME)).to_have_class(cell_class("selected"))
    expect(cell(page, MODEL, CATALOG_RUNTIME)).to_have_class(cell_class("compatible"))


def test_a_user_without_the_permission_is_refused_plainly_and_nothing_is_sent(
    live_server: Any,
    live_cluster: Cluster,
    fake_cluster: FakeKubeAPI,
    page: Page,
    django_user_model: Any,
    screenshot: Callable[..., None],
) -> None:
    make_user(django_user_model, "viewer", may_patch=False)
    sign_in_to_patch_preview(page, live_server.url, live_cluster, "viewer")
    expect(page.locator("#no-permission")).to_be_visible()

    page.get_by_role("button", name="Confirm: apply the patch").click()

    expect(page.locator("#outcome h2")).to_have_text("Permission denied: nothing was changed")
    expect(page.locator("#outcome")).to_contain_text("needs the patcher role")
    screenshot(page, "patch-denied")
    assert patch_requests(fake_cluster) == []
    assert "diffusionPipeline" not in fake_cluster.get("clusterbasemodels", MODEL)["spec"]
    assert PatchAttempt.objects.get().result == PatchAttempt.Result.DENIED


def test_a_model_changed_since_the_preview_is_a_conflict_shown_plainly_and_can_be_applied_again(
    live_server: Any,
    live_cluster: Cluster,
    fake_cluster: FakeKubeAPI,
    page: Page,
    django_user_model: Any,
    screenshot: Callable[..., None],
) -> None:
    make_user(django_user_model, "platform", may_patch=True)
    sign_in_to_patch_preview(page, live_server.url, live_cluster, "platform")
    seen = Resource.objects.get(cluster=live_cluster, name=MODEL).resource_version
    fake_cluster.patch("clusterbasemodels", MODEL, {"metadata": {"labels": {"team": "imaging"}}})

    page.get_by_role("button", name="Confirm: apply the patch").click()

    expect(page.locator("#outcome h2")).to_have_text("Conflict: the model changed since you looked at it")
    expect(page.locator("#outcome")).to_contain_text(f"since resourceVersion {seen}")
    screenshot(page, "patch-conflict")
    assert "diffusionPipeline" not in fake_cluster.get("clusterbasemodels", MODEL)["spec"]

    page.get_by_role("button", name="Confirm: apply the patch").click()

    expect(page.locator("#outcome h1")).to_have_text("Patch applied")
    stored = fake_cluster.get("clusterbasemodels", MODEL)
    assert stored["metadata"]["labels"] == {"team": "imaging"}
    assert stored["spec"]["diffusionPipeline"] == {
        "className": "QwenImagePipeline",
        "transformer": {"library": "diffusers"},
    }
    assert re.fullmatch(r"\d+", PatchAttempt.objects.filter(result="applied").get().new_resource_version)


def test_every_page_renders_without_script_errors_and_the_grid_is_keyboard_reachable(
    live_server: Any,
    live_cluster: Cluster,
    page: Page,
    screenshot: Callable[..., None],
) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    model = Resource.objects.get(cluster=live_cluster, name=MODEL)
    runtime = Resource.objects.get(cluster=live_cluster, name=RUNTIME)
    base = live_server.url

    page.goto(f"{base}/matrix/?cluster=live&namespace=team-b")
    first = page.locator("table.grid tbody td").first
    first.focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("table.grid tbody tr").first.locator("td").nth(1)).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(page.locator("table.grid tbody tr").nth(1).locator("td").nth(1)).to_be_focused()
    expect(page.locator("#cell-reason strong").first).to_be_visible()

    pages = {
        "model": f"/models/{model.pk}/",
        "runtime": f"/runtimes/{runtime.pk}/",
        "inferenceservices": "/inferenceservices/?cluster=live",
        "lint": "/lint/?cluster=live",
        "sync": "/sync/",
        "model-index": f"/models/{model.pk}/model-index/",
    }
    for name, path in pages.items():
        page.goto(base + path)
        expect(page.locator("main h1")).to_be_visible()
        screenshot(page, name, docs=name in {"model", "inferenceservices", "sync"})

    page.goto(f"{base}/runtimes/{runtime.pk}/")
    manifest = page.get_by_role("textbox", name="Runtime manifest")
    edited = yaml.safe_load(manifest.input_value())
    del edited["spec"]["supportedModelFormats"][0]["diffusionPipeline"]
    manifest.fill(yaml.safe_dump(edited))
    page.get_by_role("button", name="Show what would change").click()
    expect(page.locator("#whatif")).to_contain_text(MODEL)
    assert errors == []
