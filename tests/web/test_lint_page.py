"""The lint page: one entry per root cause with a count, its fix opened in the what-if, OME's
quirks in words, and acknowledging (hide, with who and why) and showing again."""

from __future__ import annotations

import copy
import html as html_lib
import re
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import Permission
from django.db import connection
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from access.scope import SYSTEM
from core.cache import VersionedCache
from inventory.models import Cluster, Resource
from inventory.parsed import inventory_fingerprint
from inventory.sync import event_apply
from lint.models import LintAcknowledgement, LintProofs
from lint.proving import lint_proofs_refresh
from lint.selectors import lint_report_get
from tests.web.conftest import _user
from web.pages import lint as lint_views

NO_RANGE_KEY = "no-size-range:ClusterServingRuntime srt-deepseek-r1-distill-qwen-14b"


def _acknowledger(django_user_model: Any, username: str) -> Any:
    user = _user(django_user_model, username)
    user.user_permissions.add(Permission.objects.get(codename="acknowledge_finding", content_type__app_label="lint"))
    return user


@pytest.fixture
def cluster(proven_demo: Cluster, db: None) -> Cluster:
    """The demo, its fixes proven (the page with fixes pending: tests/lint/test_proving.py)."""
    return proven_demo


@pytest.fixture
def acknowledger_client(client: Client, django_user_model: Any, db: None) -> Client:
    client.force_login(_acknowledger(django_user_model, "ops"))
    return client


def entries(html: str) -> dict[str, str]:
    """The page's groups by key."""
    return dict(re.findall(r'<li class="sev-[a-z]+[^"]*" id="group-\d+" data-key="([^"]+)">(.*?)\n  </li>', html, re.S))


def test_the_page_lists_one_entry_per_root_cause_with_its_count(client: Client, cluster: Cluster) -> None:
    html = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()

    report = lint_report_get(cluster, scope=SYSTEM)
    found = entries(html)
    assert len(found) == len(report.groups) < len(report.findings)
    no_range = html_lib.unescape(found[NO_RANGE_KEY])
    assert '<span class="count-tag">8 findings</span>' in no_range
    assert "has no modelSizeRange, so on equal scores OME's size tie-break picks it over 4 runtime(s)" in no_range
    assert "<dt>Q16</dt><dd>On equal scores, a runtime without modelSizeRange beats every runtime with one" in no_range
    # One name per severity: the badge, the filter and the matrix's count say the same words.
    assert re.search(r'<option value="info">info \(\d+\)</option>', html)
    assert "notes" not in html


def test_a_fix_opens_in_the_runtime_what_if_already_filled_in(client: Client, cluster: Cluster) -> None:
    html = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()

    # The first shadowed group whose fix disables it (one dedicated to a model of the cluster
    # is given that model's size instead).
    shadowed = next(
        body
        for key, body in entries(html).items()
        if key.startswith("shadowed:") and "Fix:</strong> disable it" in body
    )
    form = re.search(
        r'<form method="post" action="([^"]+)" class="inline">.*?name="manifest" value="([^"]*)"', shadowed, re.S
    )
    assert form
    action, manifest = form.group(1), html_lib.unescape(form.group(2))
    assert "/what-if/" in action
    assert "disabled: true" in manifest
    assert "resourceVersion" not in manifest

    result = client.post(action, {"manifest": manifest})

    assert result.status_code == 200
    page = result.content.decode()
    assert 'id="whatif"' in page
    assert "disabled: true" in html_lib.unescape(page)  # the box keeps the fixed manifest


def test_the_page_reads_the_ids_of_its_objects_once_and_no_stored_object(
    client: Client, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fix forms' manifests were made by the proving task with the proofs (lint.proving)."""
    monkeypatch.setattr(lint_views, "_MANIFESTS", VersionedCache("lint_manifests"))  # none held yet
    table = Resource._meta.db_table

    with CaptureQueriesContext(connection) as queries:
        html = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()

    by_name = [query["sql"] for query in queries if f'"{table}"."name" IN' in query["sql"]]
    with_objects = [query["sql"] for query in queries if f'"{table}"."obj"' in query["sql"].split(" FROM ")[0]]
    assert len(by_name) == 1
    assert not with_objects
    assert "disabled: true" in html_lib.unescape(html)  # the forms are filled in


def test_the_forms_are_filled_in_for_the_inventory_the_page_shows_not_the_next_one(
    client: Client, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The inventory changes, and its proofs replace the stored ones, while the page is being
    made: its forms carry no YAML proven for another inventory than its fixes' texts."""
    monkeypatch.setattr(lint_views, "_MANIFESTS", VersionedCache("lint_manifests"))  # none held yet
    group_states = lint_views.lint_group_states
    shown = inventory_fingerprint(cluster)

    def the_next_inventory_proven_meanwhile(*args: Any, **kwargs: Any) -> Any:
        Cluster.objects.filter(pk=cluster.pk).update(inventory_version=F("inventory_version") + 1)
        proofs = LintProofs.objects.get(cluster=cluster)
        proofs.fingerprint = proofs.fingerprint.replace(shown, inventory_fingerprint(cluster))
        proofs.manifests = [[*entry[:4], "next: inventory"] for entry in proofs.manifests]
        proofs.save()
        return group_states(*args, **kwargs)

    monkeypatch.setattr(lint_views, "lint_group_states", the_next_inventory_proven_meanwhile)

    html = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()

    assert "next: inventory" not in html


def test_acknowledging_needs_a_login_and_the_permission(
    client: Client, viewer_client: Client, cluster: Cluster
) -> None:
    anonymous = Client().post(reverse("lint:acknowledge"), {"cluster": "demo", "key": NO_RANGE_KEY, "reason": "x"})
    assert anonymous.status_code == 302
    assert "/accounts/login/" in anonymous["Location"]
    refused = viewer_client.post(reverse("lint:acknowledge"), {"cluster": "demo", "key": NO_RANGE_KEY, "reason": "x"})
    assert refused.status_code == 403
    assert not LintAcknowledgement.objects.exists()
    page = viewer_client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()
    assert "Acknowledging needs the <code>lint.acknowledge_finding</code> permission." in page


def test_an_acknowledged_group_is_hidden_with_who_and_why_and_can_be_shown_again(
    acknowledger_client: Client, cluster: Cluster
) -> None:
    client = acknowledger_client
    before = entries(client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode())
    empty = client.post(
        reverse("lint:acknowledge"), {"cluster": "demo", "key": NO_RANGE_KEY, "reason": " "}, follow=True
    )
    assert "Not done: say why the finding can be hidden (reason) (reason)." in html_lib.unescape(empty.content.decode())
    assert not LintAcknowledgement.objects.exists()

    reason = "generic runtime kept on purpose until the 14B rollout <done>"
    response = client.post(reverse("lint:acknowledge"), {"cluster": "demo", "key": NO_RANGE_KEY, "reason": reason})

    assert response.status_code == 302
    ack = LintAcknowledgement.objects.get()
    assert (ack.username, ack.reason, ack.key, ack.withdrawn_at) == ("ops", reason, NO_RANGE_KEY, None)
    after = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()
    assert set(entries(after)) == set(before) - {NO_RANGE_KEY}
    assert "1 acknowledged and hidden" in after
    counts = client.get(reverse("matrix:matrix-counts"), {"cluster": "demo", "namespace": "_cluster"}).content.decode()
    assert f"<strong>{len(before) - 1}</strong> lint findings by root cause" in counts

    shown = client.get(reverse("lint:lint"), {"cluster": "demo", "acknowledged": "1"}).content.decode()
    record = entries(shown)[NO_RANGE_KEY]
    assert "<strong>Acknowledged</strong> by ops on" in record
    assert "&lt;done&gt;" in record  # the reason, escaped

    client.post(reverse("lint:acknowledge"), {"cluster": "demo", "key": NO_RANGE_KEY, "withdraw": "1"})

    assert NO_RANGE_KEY in entries(client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode())
    ack.refresh_from_db()
    assert ack.withdrawn_at is not None
    assert ack.withdrawn_by == "ops"


def test_an_acknowledgement_of_a_group_that_changed_since_no_longer_hides_it(
    acknowledger_client: Client, cluster: Cluster
) -> None:
    acknowledger_client.post(reverse("lint:acknowledge"), {"cluster": "demo", "key": NO_RANGE_KEY, "reason": "ok"})
    LintAcknowledgement.objects.update(signature="an earlier form of the group")

    html = acknowledger_client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()

    assert "its findings have changed since, so it shows again" in entries(html)[NO_RANGE_KEY]


def test_the_api_lists_groups_and_acknowledges_with_the_permission(
    cluster: Cluster, django_user_model: Any, db: None
) -> None:
    api = APIClient()
    groups = api.get("/api/v1/matrix/lint/", {"cluster": "demo"}).json()["groups"]
    assert {group["key"] for group in groups} >= {NO_RANGE_KEY}
    assert all(group["acknowledged"] is None for group in groups)

    api.force_authenticate(_user(django_user_model, "reader"))
    refused = api.post("/api/v1/matrix/lint/acknowledgements/", {"cluster": "demo", "key": NO_RANGE_KEY, "reason": "x"})
    assert refused.status_code == 403
    api.force_authenticate(_acknowledger(django_user_model, "bot"))
    unknown = api.post("/api/v1/matrix/lint/acknowledgements/", {"cluster": "demo", "key": "nope", "reason": "x"})
    assert unknown.status_code == 404
    assert unknown.json()["field"] == "key"
    created = api.post("/api/v1/matrix/lint/acknowledgements/", {"cluster": "demo", "key": NO_RANGE_KEY, "reason": "x"})
    assert created.status_code == 201
    assert created.json()["by"] == "bot"
    listed = api.get("/api/v1/matrix/lint/", {"cluster": "demo"}).json()["groups"]
    assert next(g for g in listed if g["key"] == NO_RANGE_KEY)["acknowledged"]["reason"] == "x"
    assert api.delete(f"/api/v1/matrix/lint/acknowledgements/?cluster=demo&key={NO_RANGE_KEY}").status_code == 204
    assert (
        api.get("/api/v1/matrix/lint/acknowledgements/", {"cluster": "demo"}).json()["results"][0]["withdrawn_by"]
        == "bot"
    )


def test_a_pipeline_group_opens_the_models_patches_in_one_what_if(client: Client, cluster: Cluster) -> None:
    html = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()

    group = entries(html)["pipeline-missing-on-model:ClusterServingRuntime srt-qwen-image-pipeline"]
    form = re.search(
        r'<form method="post" action="([^"]+)" class="inline">.*?name="manifest" value="([^"]*)"', group, re.S
    )
    assert form
    manifest = html_lib.unescape(form.group(2))
    assert "name: qwen-image-pvc" in manifest
    assert "className: QwenImagePipeline" in manifest

    result = client.post(form.group(1), {"manifest": manifest}).content.decode()

    assert "qwen-image-pvc" in result.split('id="whatif"')[1]


def test_the_groups_are_read_a_page_at_a_time_and_the_pager_keeps_the_filters(
    client: Client, cluster: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("web.pages.lint.GROUPS_PER_PAGE", 10)
    report = lint_report_get(cluster, scope=SYSTEM)
    first = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()
    pages, keys = re.search(r"Page 1 of (\d+)", first), list(entries(first))
    assert pages is not None
    assert int(pages.group(1)) == -(-len(report.groups) // 10) > 1
    assert f"<strong>{len(report.groups)}</strong> shown" in first
    assert 'href="?cluster=demo&amp;severity=&amp;page=2" rel="next"' in first
    for number in range(2, int(pages.group(1)) + 1):
        keys += entries(client.get(reverse("lint:lint"), {"cluster": "demo", "page": number}).content.decode())
    assert sorted(keys) == sorted(group.key for group in report.groups)  # each group once, on one page

    infos = sum(1 for group in report.groups if group.severity == "info")
    assert infos > 10  # the demo's info groups fill more than one page
    filtered = client.get(reverse("lint:lint"), {"cluster": "demo", "severity": "info", "acknowledged": "1"})
    assert (
        'href="?cluster=demo&amp;severity=info&amp;acknowledged=1&amp;page=2" rel="next"' in filtered.content.decode()
    )


def test_a_fix_form_shows_the_object_as_stored_now(client: Client, cluster: Cluster) -> None:
    """The fix manifests are held per inventory version: a change of the object is shown, once
    the fixes of the new inventory are proven (until then no fix is shown at all)."""

    def shadowed_manifest() -> str:
        html = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()
        body = next(body for key, body in entries(html).items() if key.startswith("shadowed:"))
        found = re.search(r'name="manifest" value="([^"]*)"', body)
        assert found
        return html_lib.unescape(found.group(1))

    runtime = yaml.safe_load(shadowed_manifest().split("---\n")[0])
    stored = Resource.objects.get(cluster=cluster, kind=runtime["kind"], name=runtime["metadata"]["name"])
    obj = copy.deepcopy(stored.obj)
    obj["metadata"].setdefault("labels", {})["edited-by"] = "lint-test"
    event_apply(cluster, "MODIFIED", obj)
    pending = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()
    assert 'name="manifest"' not in pending
    assert 'id="fixes-pending"' in pending
    lint_proofs_refresh(cluster)

    assert "edited-by: lint-test" in shadowed_manifest()


def test_the_page_and_the_api_sort_a_fixs_moves_into_effects_harm_first(client: Client, cluster: Cluster) -> None:
    """Issue 33: the pipeline fix moves qwen-image-pvc between two runtimes serving Qwen/Qwen-Image
    (a move, said before the proof); the range fix of srt-deepseek-r1-distill-qwen-14b would serve
    Qwen models under DeepSeek's name (renames), so it is withheld with the models named."""
    html = client.get(reverse("lint:lint"), {"cluster": "demo"}).content.decode()
    pipeline = entries(html)["pipeline-missing-on-model:ClusterServingRuntime srt-qwen-image-pipeline"]
    assert '<strong class="warn">1 model(s) change runtime.</strong> Proven:' in pipeline
    withheld = entries(html)[NO_RANGE_KEY]
    assert "Open the fix in the what-if" not in withheld
    assert "qwen2-5-32b" in withheld
    assert "onto srt-deepseek-r1-distill-qwen-32b, dedicated to another model" in withheld

    groups = {
        group["key"]: group for group in APIClient().get("/api/v1/matrix/lint/", {"cluster": "demo"}).json()["groups"]
    }
    proof = groups["pipeline-missing-on-model:ClusterServingRuntime srt-qwen-image-pipeline"]["proof"]
    assert proof["harm"] == {"losses": 0, "renames": 0, "moves": 1}
    assert [move["model"]["name"] for move in proof["effects"]["moves"]] == ["qwen-image-pvc"]
    assert proof["effects"]["gains"] == proof["effects"]["renames"] == proof["effects"]["losses"] == []
    assert groups[NO_RANGE_KEY]["fix"] is None
