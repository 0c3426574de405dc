"""The matrix history page: one entry per change that caused cell changes (one patch, one
group), with the changed fields' old and new values and the patch's audit record, which links
back."""

from __future__ import annotations

import copy
import html as html_lib
import re
from typing import Any

from django.test import Client
from django.urls import reverse

from inventory.models import Cluster, Resource
from inventory.sync import event_apply
from matrix.models import CellChange
from matrix.services import matrix_apply_changes
from patches.models import PatchAttempt
from patches.services import version_of
from tests.web.conftest import SEED_MODEL, SEED_RUNTIME
from tests.web.test_patch_pages import apply


def groups(html: str) -> list[str]:
    return re.findall(r'<article class="history-group".*?</article>', html, re.S)


def patch_the_seed_model(
    client: Client, cluster: Cluster, model: Resource, runtime: Resource, capture: Any
) -> PatchAttempt:
    with capture(execute=True):
        apply(client, model, runtime, version=version_of(cluster, model))
    return PatchAttempt.objects.get(result=PatchAttempt.Result.APPLIED)


def test_a_patch_is_one_group_with_its_old_and_new_values_and_its_audit_record(
    patcher_client: Client,
    cluster: Cluster,
    seed_model: Resource,
    seed_runtime: Resource,
    eager_celery: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    attempt = patch_the_seed_model(
        patcher_client, cluster, seed_model, seed_runtime, django_capture_on_commit_callbacks
    )
    # Another change after it: a runtime edited outside the dashboard.
    runtime = Resource.objects.get(cluster=cluster, name="srt-qwen-image")
    edited = copy.deepcopy(runtime.obj)
    edited["spec"]["disabled"] = True
    change = event_apply(cluster, "MODIFIED", edited)
    matrix_apply_changes(cluster, [change.to_dict()])

    html = patcher_client.get(reverse("history"), {"cluster": "demo"}).content.decode()

    found = groups(html)
    assert len(found) == 2
    runtime_group, patch_group = found  # newest first
    assert "ClusterServingRuntime srt-qwen-image changed" in runtime_group
    assert "By patch" not in runtime_group
    assert "<code>spec.disabled</code>" in runtime_group
    assert f"ClusterBaseModel {SEED_MODEL} changed" in patch_group
    assert (
        f'By patch <a href="{reverse("patches:patch-result", args=[attempt.pk])}">{attempt.pk}</a>, applied by patcher'
        in patch_group
    )
    field = re.search(
        r"<code>spec.diffusionPipeline</code></th><td[^>]*><pre class=\"value\">(.*?)</pre></td><td[^>]*><pre class=\"value\">(.*?)</pre>",
        patch_group,
        re.S,
    )
    assert field
    assert field.group(1) == "(none)"
    assert '"className": "QwenImagePipeline"' in html_lib.unescape(field.group(2))
    counted = re.search(r"· (\d+) cells of 1 model</span>", patch_group)
    assert counted
    assert patch_group.count("<li>") == int(counted.group(1)) >= 1
    assert CellChange.objects.filter(cluster=cluster, model_name=SEED_MODEL).count() > int(counted.group(1))
    assert f"{SEED_MODEL} \u00d7 {SEED_RUNTIME}" in patch_group
    assert (
        '<span class="badge s-excluded">excluded</span> → <span class="badge s-selected">selected</span>' in patch_group
    )


def test_the_audit_record_links_to_its_group_and_the_group_back(
    patcher_client: Client,
    cluster: Cluster,
    seed_model: Resource,
    seed_runtime: Resource,
    eager_celery: None,
    django_capture_on_commit_callbacks: Any,
) -> None:
    attempt = patch_the_seed_model(
        patcher_client, cluster, seed_model, seed_runtime, django_capture_on_commit_callbacks
    )

    record = patcher_client.get(reverse("patches:patch-result", args=[attempt.pk])).content.decode()
    link = re.search(r'<a id="history-link" href="([^"]+)">', record)
    assert link
    history = patcher_client.get(html_lib.unescape(link.group(1))).content.decode()

    assert f'Only what patch <a href="{reverse("patches:patch-result", args=[attempt.pk])}">{attempt.pk}</a>' in history
    assert len(groups(history)) == 1
    assert "By patch" in groups(history)[0]


def test_the_history_is_in_the_navigation_and_says_when_there_is_nothing(client: Client, cluster: Cluster) -> None:
    html = client.get(reverse("history"), {"cluster": "demo"}).content.decode()

    assert f'<a href="{reverse("history")}" aria-current="page">History</a>' in html
    assert "No change of the matrix is recorded yet." in html
    missing = client.get(reverse("history"), {"cluster": "nope"})
    assert missing.status_code == 404
    assert "no cluster named &#x27;nope&#x27;" in missing.content.decode()
