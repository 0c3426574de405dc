"""Lint fixes proven out of requests (lint.proving): until the proofs of the current inventory
are stored, the lint page and API show the findings without any fix and say the fixes are being
proven; a matrix update asks for the proofs, one queued task per cluster, and a worker stores
them; proofs of an older inventory are never shown as current."""

from __future__ import annotations

import copy
import dataclasses
import re
from datetime import timedelta
from typing import Any

import pytest
from celery.worker import WorkController
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError

from access.scope import SYSTEM
from core.cache import VersionedCache
from inventory.models import Cluster, Resource
from inventory.parsed import inventory_fingerprint
from inventory.services import cluster_register, manifests_load, parse_cluster_setting
from inventory.sync import event_apply
from lint import selectors
from lint.models import LintProofs
from lint.proving import lint_proofs_refresh, lint_proofs_request
from lint.selectors import FIXES_PENDING, lint_report_get
from lint.tasks import lint_prove_task
from matrix.services import matrix_rebuild
from matrix.tasks import matrix_update_task
from tests.support.processes import wait_until


@pytest.fixture(autouse=True)
def nothing_held(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proven report held by this process from another test."""
    monkeypatch.setattr(selectors, "_PROVEN", VersionedCache("lint_proven"))


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The clusters whose proving task was queued (the task is not run)."""
    calls: list[int] = []
    monkeypatch.setattr(lint_prove_task, "delay", calls.append)
    return calls


def fix_forms(html: str) -> list[str]:
    return re.findall(r'name="manifest" value="', html)


@pytest.mark.django_db
def test_before_its_proofs_the_page_shows_the_findings_without_fixes_and_asks_once(
    client: Client, demo: Cluster, queued: list[int]
) -> None:
    demo.refresh_from_db()
    unproven = lint_report_get(demo, scope=SYSTEM)
    with_fix = [group.key for group in unproven.groups if group.fix is not None]
    assert with_fix

    html = client.get(reverse("lint:lint"), {"cluster": demo.name}).content.decode()
    again = client.get(reverse("lint:lint"), {"cluster": demo.name}).content.decode()

    assert queued == [demo.pk]  # one task for both views
    for page in (html, again):
        assert not fix_forms(page)
        assert "Proven:" not in page
        assert f"Fixes are being proven by the what-if for inventory version {demo.inventory_version}" in page
        assert '<div id="lint-live" hx-get=' in page  # the page polls until they are
        assert FIXES_PENDING in page
    report = lint_report_get(demo, scope=SYSTEM, proven=True)
    assert report.fixes_pending_for == demo.inventory_version
    assert report.findings == unproven.findings
    assert all(group.fix is None and group.proof is None and group.alternative is None for group in report.groups)


@pytest.mark.django_db
def test_once_proven_the_page_shows_the_proven_fixes_and_stops_polling(
    client: Client, demo: Cluster, queued: list[int]
) -> None:
    proofs = lint_proofs_refresh(demo)
    assert proofs is not None
    assert proofs.fingerprint.startswith(f"{inventory_fingerprint(demo)}/fixes:")
    assert proofs.seconds is not None
    assert proofs.seconds > 0

    html = client.get(reverse("lint:lint"), {"cluster": demo.name}).content.decode()

    assert fix_forms(html)
    assert "Proven: the what-if" in html
    assert 'id="fixes-pending"' not in html
    assert '<div id="lint-live">' in html
    assert not queued
    assert lint_proofs_refresh(demo) is None  # proven already for this inventory: nothing to do


@pytest.mark.django_db
def test_proofs_of_an_older_inventory_are_not_shown_as_current(
    client: Client, demo: Cluster, queued: list[int]
) -> None:
    lint_proofs_refresh(demo)
    assert client.get("/api/v1/matrix/lint/", {"cluster": demo.name}).json()["fixes_pending_for"] is None
    runtime = Resource.objects.filter(cluster=demo, kind="ClusterServingRuntime").order_by("name").first()
    assert runtime is not None
    obj = copy.deepcopy(runtime.obj)
    obj["metadata"].setdefault("labels", {})["edited-by"] = "proving-test"
    event_apply(demo, "MODIFIED", obj)
    demo.refresh_from_db()

    answer = client.get("/api/v1/matrix/lint/", {"cluster": demo.name}).json()

    assert answer["fixes_pending_for"] == demo.inventory_version
    assert all(group["fix"] is None and group["proof"] is None for group in answer["groups"])
    assert any(group["no_fix"] == FIXES_PENDING for group in answer["groups"])
    assert queued == [demo.pk]
    lint_proofs_refresh(demo)
    answer = client.get("/api/v1/matrix/lint/", {"cluster": demo.name}).json()
    assert answer["fixes_pending_for"] is None
    assert any(group["fix"] and group["proof"] for group in answer["groups"])


@pytest.mark.django_db
def test_one_task_is_queued_per_cluster_until_it_starts_or_is_lost(
    demo: Cluster, queued: list[int], settings: Any
) -> None:
    assert lint_proofs_request(demo.pk)
    assert not lint_proofs_request(demo.pk)
    assert queued == [demo.pk]

    LintProofs.objects.filter(cluster=demo).update(queued_at=None)  # what the task does first
    assert lint_proofs_request(demo.pk)
    lost = timezone.now() - timedelta(seconds=settings.LINT_PROOFS_REQUEUE_AFTER + 1)
    LintProofs.objects.filter(cluster=demo).update(queued_at=lost)  # its task lost with a worker
    assert lint_proofs_request(demo.pk)
    assert queued == [demo.pk] * 3
    assert not lint_proofs_request(demo.pk + 1000)  # no such cluster


@pytest.mark.django_db
def test_with_the_broker_away_the_page_answers_and_the_next_view_asks_again(
    client: Client, demo: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    def away(cluster_id: int) -> None:
        raise OperationalError("the broker is away")

    monkeypatch.setattr(lint_prove_task, "delay", away)

    response = client.get(reverse("lint:lint"), {"cluster": demo.name})

    assert response.status_code == 200
    assert 'id="fixes-pending"' in response.content.decode()
    assert LintProofs.objects.get(cluster=demo).queued_at is None


@pytest.mark.integration
@pytest.mark.django_db(transaction=True)
def test_a_worker_proves_the_fixes_after_the_matrix_update_of_a_change(
    celery_worker: WorkController, settings: Any
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False  # the update is queued below, as matrix.pending would
    settings.LINT_PROVE_ON_UPDATE = False
    cluster = cluster_register(parse_cluster_setting("proving=manifests:catalog/runtimes,demo")[0])
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    # Proven as the build leaves it (a task another test left for a reused cluster id may
    # already have done so: the worker takes what the queue holds).
    lint_proofs_refresh(cluster)
    before = LintProofs.objects.get(cluster=cluster).fingerprint
    settings.LINT_PROVE_ON_UPDATE = True
    model = Resource.objects.get(cluster=cluster, name="qwen-image-pvc")
    obj = copy.deepcopy(model.obj)
    obj["metadata"].setdefault("labels", {})["edited-by"] = "proving-test"
    event_apply(cluster, "MODIFIED", obj)

    # On the worker: the matrix update, its matrix_updated signal, then the proving task it queues.
    matrix_update_task.apply_async((cluster.pk,), ignore_result=False).get(timeout=120)

    fingerprint = inventory_fingerprint(cluster)
    assert fingerprint != before
    proven = LintProofs.objects.filter(cluster=cluster, fingerprint__startswith=f"{fingerprint}/")
    assert wait_until(proven.exists, timeout=180)
    report = lint_report_get(cluster, scope=SYSTEM, proven=True)
    assert report.fixes_pending_for is None
    assert any(group.proof is not None for group in report.groups)
    assert LintProofs.objects.get(cluster=cluster).queued_at is None


@pytest.mark.django_db
def test_proofs_of_other_fixes_for_the_same_inventory_are_not_shown(
    demo: Cluster, queued: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A release whose lint proposes another fix for an inventory proven by the one before
    (same fingerprint, same group keys) shows no fix until the new fixes are proven."""
    lint_proofs_refresh(demo)
    assert lint_report_get(demo, scope=SYSTEM, proven=True).fixes_pending_for is None
    lint_inventory = selectors.lint_inventory

    def next_release(*args: Any, **kwargs: Any) -> Any:
        report = lint_inventory(*args, **kwargs)
        groups = [
            group if group.fix is None else dataclasses.replace(group, fix=dataclasses.replace(group.fix, patch={}))
            for group in report.groups
        ]
        return dataclasses.replace(report, groups=groups)

    monkeypatch.setattr(selectors, "lint_inventory", next_release)
    monkeypatch.setattr(selectors, "_LINT", VersionedCache("lint_reports"))

    report = lint_report_get(demo, scope=SYSTEM, proven=True)

    assert report.fixes_pending_for is not None
    assert all(group.fix is None and group.proof is None for group in report.groups)
