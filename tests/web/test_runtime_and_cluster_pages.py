"""The runtime page and its what-if, the InferenceServices, lint, sync and home pages."""

from __future__ import annotations

import copy
import html as html_module
import re
from html import unescape as html_unescape
from typing import Any

import yaml
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from access.scope import SYSTEM
from inventory.models import Cluster, Resource, SyncState
from inventory.sync import event_apply
from isvcs.services import isvc_verdicts, isvc_verdicts_refresh
from tests.web.conftest import SEED_MODEL, SEED_RUNTIME


def test_the_runtime_page_lists_entries_the_models_each_matches_and_lint_findings(
    client: Client, cluster: Cluster, seed_runtime: Resource
) -> None:
    response = client.get(reverse("matrix:runtime", args=[seed_runtime.pk]))

    html = response.content.decode()
    assert response.status_code == 200
    assert "<h3>Entry 0</h3>" in html
    assert "<dt>Architecture</dt><dd>QwenImagePipeline</dd>" in html
    assert "QwenImagePipeline" in html
    assert "diffusers" in html
    entry = html.split("<h3>Entry 0</h3>")[1].split("</article>")[0]
    assert ">qwen-image</a>" in entry
    assert "OME's pick" in entry
    findings = html.split("Lint findings")[1].split("</section>")[0]
    assert "pipeline-missing-on-model" in findings
    assert SEED_MODEL in findings


def test_the_runtime_page_offers_its_manifest_for_editing_without_server_fields(
    client: Client, seed_runtime: Resource
) -> None:
    html = client.get(reverse("matrix:runtime", args=[seed_runtime.pk])).content.decode()

    text = re.search(r'<textarea id="id_manifest"[^>]*>(.*?)</textarea>', html, re.S).group(1)
    manifest = yaml.safe_load(html_module.unescape(text))
    assert manifest["metadata"]["name"] == SEED_RUNTIME
    assert "resourceVersion" not in manifest["metadata"]
    assert "status" not in manifest


def test_the_what_if_of_an_edited_manifest_names_the_cells_that_would_change(
    client: Client, seed_runtime: Resource, htmx: dict[str, str]
) -> None:
    edited = dict(seed_runtime.obj)
    spec = dict(edited["spec"])
    spec["supportedModelFormats"] = [
        {k: v for k, v in spec["supportedModelFormats"][0].items() if k != "diffusionPipeline"}
    ]
    edited["spec"] = spec

    response = client.post(
        reverse("whatif:runtime-whatif", args=[seed_runtime.pk]), {"manifest": yaml.safe_dump(edited)}, headers=htmx
    )

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="whatif"')
    assert SEED_MODEL in html
    assert "srt-qwen-image \u2192 srt-qwen-image-pipeline" in html


def test_a_manifest_that_cannot_be_read_is_an_error_shown_in_place(client: Client, seed_runtime: Resource) -> None:
    response = client.post(reverse("whatif:runtime-whatif", args=[seed_runtime.pk]), {"manifest": "kind: [unclosed"})

    html = response.content.decode()
    assert response.status_code == 400
    assert '<p class="error" role="alert">' in html
    assert "kind: [unclosed" in html  # the text stays in the form to be corrected


def isvc_groups(html: str) -> dict[str, list[str]]:
    """The services of each group of the InferenceServices page, in order."""
    groups = {}
    for name, body in re.findall(r'<section class="isvc-group" id="group-(\w+)".*?>(.*?)</section>', html, re.S):
        groups[name] = re.findall(r'<tr class="[a-z]*" data-isvc="([^"]+)">', body)
    return groups


def isvc_row(html: str, name: str) -> str:
    return html.split(f'data-isvc="{name}">')[1].split("</tr>")[0]


def test_the_inference_services_page_lists_blocked_services_apart_with_their_fix(
    client: Client, cluster: Cluster
) -> None:
    html = client.get(reverse("matrix:isvcs"), {"cluster": "demo"}).content.decode()

    groups = isvc_groups(html)
    assert sum(len(names) for names in groups.values()) == 10
    assert list(groups) == ["blocked", "unchanged"]  # nothing changed since first seen: no such group
    assert "team-b/llama-8b" in groups["blocked"]
    assert "research/qwen-image" in groups["unchanged"]
    row = isvc_row(html, "research/qwen-image-pipeline")
    assert "used anyway (advisory)" in row
    assert "patch the model&#x27;s diffusionPipeline" in row
    model = Resource.objects.get(cluster=cluster, name=SEED_MODEL)
    runtime = Resource.objects.get(cluster=cluster, name=SEED_RUNTIME)
    assert (
        f'href="{reverse("patches:patch", args=[model.pk])}?runtime={runtime.pk}">Make {SEED_MODEL} match {SEED_RUNTIME}</a>'
        in row
    )


def test_a_service_ome_admits_and_then_ignores_is_listed_apart_with_the_log_line(
    client: Client, cluster: Cluster
) -> None:
    # ome-docs guides/troubleshoot/troubleshoot-an-inferenceservice.md: a BaseModel referenced
    # without kind: BaseModel (the kind defaults to ClusterBaseModel) gets no pods, no event, and
    # the controller logs `Failed to get referenced ClusterBaseModel`.
    stored = Resource.objects.get(cluster=cluster, kind="InferenceService", namespace="team-b", name="qwen3-moe-fp8")
    silent = copy.deepcopy(stored.obj)
    silent["metadata"].update({"name": "kind-left-out", "uid": "uid-kind-left-out"})
    del silent["spec"]["model"]["kind"]
    event_apply(cluster, "ADDED", silent)

    html = client.get(reverse("matrix:isvcs"), {"cluster": "demo"}).content.decode()

    assert isvc_groups(html)["silent"] == ["team-b/kind-left-out"]
    row = isvc_row(html, "team-b/kind-left-out")
    assert "admitted, silently not deployed" in row
    assert "Failed to get referenced ClusterBaseModel" in row
    assert "set spec.model.kind: BaseModel" in row


def test_a_long_no_runtime_error_is_one_collapsed_entry_per_runtime(client: Client, cluster: Cluster) -> None:
    html = client.get(reverse("matrix:isvcs"), {"cluster": "demo", "search": "llama-8b"}).content.decode()

    row = isvc_row(html, "team-b/llama-8b")
    head, listed = row.split('<details class="excluded">')
    assert "no runtime found to support model" in head
    assert "Excluded runtimes:" not in row  # not the wall of text: one entry per runtime
    runtimes = re.findall(r"<li><details><summary><code>([^<]+)</code></summary><p>([^<]+)</p></details></li>", listed)
    error = next(
        v.error for v in isvc_verdicts(cluster, scope=SYSTEM) if v.name == "llama-8b" and v.namespace == "team-b"
    )
    listed_error = error.split(". Excluded runtimes: ")[1]
    # Exactly OME's list, one entry per runtime (a cluster runtime's reason replaces a same-named
    # namespaced one's in OME's text too, Q27).
    assert "; ".join(f"{name} ({html_unescape(reason)})" for name, reason in runtimes) == listed_error
    assert len(runtimes) > 100
    assert re.search(r"<summary>\d+ excluded runtimes, one reason each</summary>", listed)


def test_first_seen_and_today_are_two_columns_and_first_seen_is_explained(client: Client, cluster: Cluster) -> None:
    isvc_verdicts_refresh(cluster)
    html = client.get(reverse("matrix:isvcs"), {"cluster": "demo"}).content.decode()

    assert '<th scope="col">When first seen</th><th scope="col">Today</th>' in html
    assert "<dfn>First seen</dfn>:" in html
    row = isvc_row(html, "research/qwen-image")
    first = row.split('class="first">')[1].split("</td>")[0]
    today = row.split('class="today">')[1].split("</td>")[0]
    assert "auto-selected</span>: srt-qwen-image" in first
    assert "first seen <time" in first
    assert "auto-selected</span>: srt-qwen-image" in today


def test_a_service_decided_differently_today_shows_both_decisions(client: Client, cluster: Cluster) -> None:
    isvc_verdicts_refresh(cluster)
    runtime = Resource.objects.get(cluster=cluster, kind="ClusterServingRuntime", name="srt-qwen-image")
    disabled = copy.deepcopy(runtime.obj)
    disabled["spec"]["disabled"] = True
    event_apply(cluster, "MODIFIED", disabled)

    html = client.get(reverse("matrix:isvcs"), {"cluster": "demo"}).content.decode()

    groups = isvc_groups(html)
    assert "research/qwen-image" not in groups["unchanged"]
    row = isvc_row(html, "research/qwen-image")
    first = row.split('class="first">')[1].split("</td>")[0]
    today = row.split('class="today">')[1].split("</td>")[0]
    assert "auto-selected</span>: srt-qwen-image<br>" in first
    assert "srt-qwen-image<" not in today.replace("srt-qwen-image-", "")
    assert re.search(r'<strong class="drift">(no-longer-matches|would-pick-differently)</strong>', today)


def test_at_risk_keeps_only_the_services_at_risk(client: Client, cluster: Cluster) -> None:
    html = client.get(
        reverse("matrix:isvcs"), {"cluster": "demo", "at_risk": "1", "namespace": "research"}
    ).content.decode()

    names = [name for names in isvc_groups(html).values() for name in names]
    assert names
    assert all(name.startswith("research/") for name in names)
    assert "research/qwen-image" not in names  # selected: not at risk


def test_the_lint_page_lists_findings_with_links_and_filters_by_severity(
    client: Client, cluster: Cluster, seed_runtime: Resource
) -> None:
    everything = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()
    warnings = client.get(reverse("lint:lint"), {"cluster": "demo", "severity": "warning"}).content.decode()

    assert f'<a href="{reverse("matrix:runtime", args=[seed_runtime.pk])}">{SEED_RUNTIME}</a>' in everything
    assert everything.count('<li class="sev-') > warnings.count('<li class="sev-') > 0
    assert '<li class="sev-info">' not in warnings


def test_the_sync_page_shows_each_clusters_sync_state_and_matrix(client: Client, cluster: Cluster) -> None:
    SyncState.objects.filter(cluster=cluster, kind="InferenceService").update(
        last_error="list failed: 503", last_error_at="2026-01-01T00:00:00Z"
    )

    html = client.get(reverse("sync")).content.decode()

    assert '<h2 id="cluster-' in html
    assert ">demo</h2>" in html
    assert "manifests:" in html
    assert re.search(r"Matrix build \d+: 835 rows", html)
    assert '<tr class="has-error">' in html
    assert "list failed: 503" in html
    assert f'action="{reverse("inventory:resync", args=["demo"])}"' in html


def test_the_sync_table_refreshes_itself(client: Client, cluster: Cluster, htmx: dict[str, str]) -> None:
    html = client.get(reverse("sync"), headers=htmx).content.decode()

    assert html.lstrip().startswith('<div id="clusters"')
    assert 'hx-trigger="every 3s"' in html


def test_a_resync_needs_a_login_and_the_permission(
    client: Client, cluster: Cluster, viewer: Any, monkeypatch: Any
) -> None:
    queued: list[int] = []
    monkeypatch.setattr(
        "web.pages.inventory.resync_cluster.apply_async", lambda args, **options: queued.append(args[0])
    )
    url = reverse("inventory:resync", args=["demo"])

    anonymous = client.post(url)
    client.force_login(viewer)
    refused = client.post(url)

    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith("/accounts/login/")
    assert refused.status_code == 403
    assert queued == []


def test_a_resync_is_queued_and_the_page_says_so(
    client: Client, cluster: Cluster, django_user_model: Any, monkeypatch: Any
) -> None:
    queued: list[int] = []
    monkeypatch.setattr(
        "web.pages.inventory.resync_cluster.apply_async", lambda args, **options: queued.append(args[0])
    )
    operator = django_user_model.objects.create_user("operator")
    operator.user_permissions.add(
        Permission.objects.get(content_type__app_label="inventory", codename="change_cluster")
    )
    client.force_login(operator)

    response = client.post(reverse("inventory:resync", args=["demo"]), follow=True)

    assert queued == [cluster.pk]
    assert "Resync of cluster demo queued" in response.content.decode()


def test_the_home_page_links_every_page(client: Client, db: None) -> None:
    html = client.get("/").content.decode()

    for name in ("matrix:matrix", "matrix:isvcs", "lint:lint", "sync"):
        assert f'href="{reverse(name)}"' in html


def test_the_login_page_signs_in_and_goes_back(client: Client, viewer: Any) -> None:
    page = client.get(reverse("login"), {"next": "/matrix/"})
    response = client.post(
        reverse("login"), {"username": "viewer", "password": "correct horse battery staple", "next": "/matrix/"}
    )

    assert page.status_code == 200
    assert 'name="next" value="/matrix/"' in page.content.decode()
    assert response.status_code == 302
    assert response["Location"] == "/matrix/"
