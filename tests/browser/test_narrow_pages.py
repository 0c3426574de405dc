"""Every page of the URLconf at 390 px in headless Chromium: none scrolls sideways.

The URLconf is walked, so a page added later is measured too, or must be named in NOT_PAGES with
why it is not one (an endpoint answering JSON, a fragment or a POST)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from playwright.sync_api import Page

from inventory.models import Cluster, Resource
from patches.models import PatchAttempt
from patches.services import patch_apply, version_of

pytestmark = pytest.mark.browser

WIDTH = 390
PASSWORD = "a-narrow-screen-password"
MODEL = "qwen-image-pvc"
RUNTIME = "srt-qwen-image-pipeline"
PIPELINE = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}
# URL names that are no page to look at, and why.
NOT_PAGES = {
    "healthz": "probe (JSON)",
    "readyz": "probe (JSON)",
    "metrics": "Prometheus text",
    "matrix-counts": "fragment the matrix page polls",
    "matrix-version": "fragment the pages poll",
    "cell-reason": "one-line fragment under the grid",
    "near-misses": "fragment of the model page (measured there)",
    "runtime-whatif": "POST answered by the runtime page's fragment",
    "freshness": "fragment of the freshness banner, which every cluster page polls (measured there)",
    "ome-version": "POST only",
    "acknowledge": "POST only",
    "resync": "POST only",
    "logout": "POST only",
}


def url_names() -> Iterator[str]:
    def walk(patterns: list[Any], prefix: str) -> Iterator[str]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern) and not (prefix + str(pattern.pattern)).startswith(("api/", "admin/")):
                yield str(pattern.name)

    return walk(get_resolver().url_patterns, "")


def pages(cluster: Cluster, attempt: PatchAttempt) -> dict[str, str]:
    model = Resource.objects.get(cluster=cluster, name=MODEL)
    runtime = Resource.objects.get(cluster=cluster, name=RUNTIME)
    return {
        "home": "/",
        "sync": "/sync/",
        "search": "/search/?q=qwen",
        "history": "/history/?cluster=live",
        "matrix": "/matrix/?cluster=live",
        "cell": f"/cells/{model.pk}/{runtime.pk}/_cluster/",
        "model": f"/models/{model.pk}/",
        "runtime": f"/runtimes/{runtime.pk}/",
        "isvcs": "/inferenceservices/?cluster=live",
        "upgrade": "/matrix/upgrade/?cluster=live",
        "patch": f"/models/{model.pk}/patch/?runtime={runtime.pk}",
        "model-index": f"/models/{model.pk}/model-index/",
        "patch-result": f"/patches/{attempt.pk}/",
        "lint": "/lint/?cluster=live",
        "fleet": "/fleet/",
        "policies": "/policies/?cluster=live",
        "cluster-add": "/clusters/add/",
        "login": "/accounts/login/",
        "password_change": "/accounts/password_change/",
        "password_change_done": "/accounts/password_change/done/",
        "password_reset": "/accounts/password_reset/",
        "password_reset_done": "/accounts/password_reset/done/",
        "password_reset_confirm": "/accounts/reset/MQ/set-password/",
        "password_reset_complete": "/accounts/reset/done/",
    }


# How far the page scrolls sideways, and the outermost elements that stick out (to name the culprit).
OVERFLOW = """() => {
  const width = window.innerWidth;
  const name = e => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).split(" ").join(".") : "");
  const sticksOut = e => e.getBoundingClientRect().right > width + 1;
  // An element that sticks out while its parent does not, or whose own text runs past its box.
  const out = [...document.querySelectorAll("body *")].filter(e =>
      (sticksOut(e) && !sticksOut(e.parentElement)) ||
      (getComputedStyle(e).overflowX === "visible" && e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 &&
       e.getBoundingClientRect().left + e.scrollWidth > width + 1))
    .slice(0, 3).map(name);
  return [document.documentElement.scrollWidth - width, out];
}"""


def overflow(page: Page) -> tuple[int, list[str]]:
    pixels, culprits = page.evaluate(OVERFLOW)
    return int(pixels), list(culprits)


def test_no_page_scrolls_sideways_at_390_px(
    live_server: Any, live_cluster: Cluster, page: Page, django_user_model: Any
) -> None:
    root = django_user_model.objects.create_superuser("root", password=PASSWORD)
    model = Resource.objects.get(cluster=live_cluster, name=MODEL)
    attempt = patch_apply(
        live_cluster,
        model=model.pk,
        patch={"spec": {"diffusionPipeline": PIPELINE}},
        resource_version=version_of(live_cluster, model),
        user=root,
    ).attempt
    paths = pages(live_cluster, attempt)
    assert set(paths) | set(NOT_PAGES) == set(url_names())
    page.set_viewport_size({"width": WIDTH, "height": 900})
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_server.url}/")

    wide = {}
    for name, path in paths.items():
        page.goto(live_server.url + path)
        wide[name] = overflow(page)

    assert {name: found for name, found in wide.items() if found[0] > 0} == {}
