"""Nearest misses in headless Chromium: a model one framework patch release away from a
runtime, the runtime-side fix proposed with its kubectl command and its matrix impact, opened
in the runtime's what-if already filled in; and the what-if catching a typo by its path."""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from inventory.models import Cluster, Resource
from tests.fakes.kube_api import FakeKubeAPI
from tests.support.manifests import llama_model

pytestmark = pytest.mark.browser

MODEL = "llama-8b-recorded"
RUNTIME = "sglang-llama-4-51-1"


@pytest.fixture
def version_mismatch(fake_cluster: FakeKubeAPI) -> None:
    """A model recorded with transformers 4.51.0 and a runtime that requires 4.51.1, added to
    the demo cluster before it is synced."""
    entry = {
        "modelFormat": {"name": "safetensors", "version": "1.0.0"},
        "modelFramework": {"name": "transformers", "version": "4.51.1"},
        "modelArchitecture": "LlamaForCausalLM",
        "autoSelect": True,
    }
    model = llama_model(MODEL, storage={"storageUri": "hf://meta-llama/Llama-3.1-8B"})
    model["apiVersion"] = "ome.io/v1beta1"
    fake_cluster.apply(copy.deepcopy(model))
    fake_cluster.apply(
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "ClusterServingRuntime",
            "metadata": {"name": RUNTIME},
            "spec": {"supportedModelFormats": [entry], "containers": [{"name": "engine", "image": "sglang:0.4"}]},
        }
    )


def in_viewport(page: Page, selector: str) -> bool:
    return bool(
        page.evaluate(
            """(selector) => { const box = document.querySelector(selector).getBoundingClientRect();
                 return box.top >= 0 && box.top < window.innerHeight; }""",
            selector,
        )
    )


def test_a_runtime_side_fix_for_a_version_mismatch_is_proposed_and_previewed(
    version_mismatch: None, live_server: Any, live_cluster: Cluster, page: Page, screenshot: Callable[..., None]
) -> None:
    model = Resource.objects.get(cluster=live_cluster, name=MODEL)
    page.goto(f"{live_server.url}/models/{model.pk}/")

    misses = page.locator("#near-misses")
    expect(misses).to_be_visible()  # loaded by itself: the model has no runtime
    first = misses.locator("article.near-miss").first
    expect(first.locator("h3")).to_contain_text(RUNTIME)
    expect(first.locator(".distance")).to_have_text("one check away")
    expect(first.locator("ul.failed")).to_contain_text("framework version mismatch (model=4.51.0, runtime=4.51.1)")
    runtime_fix = misses.locator("ol.fixes > li").first  # the best of one ranking across runtimes
    expect(runtime_fix).to_contain_text(f"{RUNTIME} one check away")
    expect(runtime_fix.locator(".fix-head")).to_contain_text("set modelFramework.version 4.51.0 on entry 0")
    expect(runtime_fix.locator(".impact")).to_have_text("Changes no other model.")
    expect(runtime_fix.locator(".impact-rows")).to_contain_text(f"{MODEL} gets a runtime: OME would pick {RUNTIME}")
    expect(runtime_fix.locator("pre.kubectl")).to_have_text(
        f"kubectl patch clusterservingruntimes.ome.io {RUNTIME} --type json -p "
        """'[{"op":"add","path":"/spec/supportedModelFormats/0/modelFramework/version","value":"4.51.0"}]'"""
    )
    # The model's recorded framework version is a fact: no fix changes it.
    expect(misses.locator(".fix-model")).to_have_count(0)
    screenshot(page, "near-misses", full_page=True)

    runtime_fix.get_by_role("button", name="Open in the what-if").click()

    page.wait_for_url(re.compile(r"/runtimes/\d+/what-if/#whatif$"))
    expect(page.locator("#id_manifest")).to_have_value(re.compile(r"version: 4\.51\.0"))
    result = page.locator("#whatif")
    expect(result.locator("table.whatif-rows")).to_contain_text(MODEL)
    expect(result.locator("table.whatif-rows")).to_contain_text(f"none → {RUNTIME}")
    expect(result.locator("a.cell-link", has_text=f"{RUNTIME} cell")).to_be_visible()
    assert in_viewport(page, "#whatif")
    screenshot(page, "near-miss-whatif")

    # A typo in the filled-in manifest is caught by OME's CRD schema, with its path.
    text = page.locator("#id_manifest").input_value()
    page.locator("#id_manifest").fill(text.replace("modelArchitecture:", "modelArchitectur:", 1))
    page.evaluate("window.scrollTo(0, 0)")
    page.get_by_role("button", name="Show what would change").click()

    expect(result.locator("p.error")).to_contain_text("spec.supportedModelFormats[0].modelArchitectur: unknown field")
    expect(result.locator("ul.problems")).to_contain_text("(did you mean modelArchitecture?)")
    expect(page.locator("#whatif")).to_be_focused()
    assert in_viewport(page, "#whatif")
