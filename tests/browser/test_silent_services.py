"""Will OME silently ignore it? The InferenceServices page's "Silently ignored by OME" and "Waiting
for a re-apply" sections, end to end in headless Chromium against a live cluster served by the
fake Kubernetes API: the filter, the escaping of what the cluster wrote, and the re-apply command
run for real with kubectl.

Sources: ome-docs `reference/matching/runtime-accelerator-class-matching.md` ("A named runtime
without classes drops the class"), `guides/troubleshoot/troubleshoot-an-inferenceservice.md`
(wrong kind: "the controller's logs show `Failed to get referenced ClusterBaseModel`") and
`guides/deploy-models/troubleshoot-runtime-selection.md` (OME does not watch models).
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from inventory.live.resync import cluster_resync
from inventory.models import Cluster
from tests.fakes.kube_api import FakeKubeAPI

pytestmark = pytest.mark.browser

HOSTILE = 'nvidia-h100"><b id="injected">x</b>'


def copy_service(fake: FakeKubeAPI, name: str, **spec: Any) -> None:
    service = fake.get("InferenceService", "qwen3-moe-fp8", "team-b")
    assert service is not None
    service = copy.deepcopy(service)
    service["metadata"] = {"name": name, "namespace": "team-b"}
    service["spec"].update(spec)
    fake.apply(service)


def test_ignored_services_are_listed_with_their_fix_and_filtered_and_nothing_is_rendered_unescaped(
    live_server: Any, live_cluster: Cluster, fake_cluster: FakeKubeAPI, page: Page, screenshot: Callable[..., None]
) -> None:
    copy_service(fake_cluster, "wrong-kind", model={"name": "qwen3-30b-a3b-fp8", "kind": "ClusterBaseModel"})
    copy_service(
        fake_cluster,
        "class-dropped",
        runtime={"name": "srt-qwen3-8b"},
        acceleratorSelector={"acceleratorClass": HOSTILE},
    )
    assert not cluster_resync(live_cluster).errors

    page.goto(f"{live_server.url}/inferenceservices/?cluster=live")

    group = page.locator("#group-silent")
    expect(group.locator("h2")).to_contain_text("Silently ignored by OME (2)")
    wrong = group.locator('tr[data-isvc="team-b/wrong-kind"]')
    expect(wrong.locator("p.ignored")).to_contain_text("Failed to get referenced ClusterBaseModel")
    expect(wrong.locator("td.fix")).to_have_text("set spec.model.kind: BaseModel")
    dropped = group.locator('tr[data-isvc="team-b/class-dropped"]')
    expect(dropped.locator("p.ignored")).to_contain_text(f"spec.acceleratorSelector.acceleratorClass: {HOSTILE}")
    expect(dropped.locator("td.fix")).to_contain_text(
        f"add {HOSTILE} to spec.acceleratorRequirements.acceleratorClasses"
    )
    expect(page.locator("#injected")).to_have_count(0)
    screenshot(page, "inferenceservices-silent")

    page.get_by_label("only those OME silently ignores").check()
    page.get_by_role("button", name="Filter").click()

    expect(page).to_have_url(f"{live_server.url}/inferenceservices/?cluster=live&namespace=&search=&ignored=1")
    expect(page.locator("section.isvc-group")).to_have_count(1)
    expect(page.locator("section.isvc-group tbody tr")).to_have_count(2)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_a_service_waiting_for_a_re_apply_leaves_the_list_once_its_command_ran(
    live_server: Any, live_cluster: Cluster, fake_cluster: FakeKubeAPI, page: Page, tmp_path: Path
) -> None:
    model = fake_cluster.get("ClusterBaseModel", "qwen-image-pvc")
    assert model is not None
    model["spec"]["diffusionPipeline"] = {"className": "QwenImagePipeline", "transformer": {"library": "diffusers"}}
    fake_cluster.apply(model)  # OME would now pick another runtime for research/qwen-image
    assert not cluster_resync(live_cluster).errors

    page.goto(f"{live_server.url}/inferenceservices/?cluster=live&reapply=1")

    row = page.locator('#group-reapply tr[data-isvc="research/qwen-image"]')
    command = row.locator("pre.reapply-command").inner_text()
    assert command.startswith("kubectl annotate inferenceservice/qwen-image -n research --overwrite ")
    kubeconfig = fake_cluster.write_kubeconfig(tmp_path / "kubeconfig")
    done = subprocess.run(
        ["bash", "-c", f"{command} --kubeconfig {kubeconfig}"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert not cluster_resync(live_cluster).errors

    page.reload()
    expect(page.locator("p.empty")).to_contain_text("No InferenceService waiting for a re-apply")
