"""The add-cluster page in Chromium: an administrator picks a kubeconfig context of the
kubeconfig directory, sees the connection test (server version, the OME detected, every kind
readable), registers the cluster and finds it on the sync page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from inventory.models import Cluster
from tests.browser.test_seed_case import PASSWORD, sign_in
from tests.fakes.kube_api import FakeKubeAPI

pytestmark = pytest.mark.browser
SEED = Path(__file__).resolve().parents[2] / "demo/seed"


@pytest.fixture
def member(settings: Any, tmp_path: Path) -> Iterator[FakeKubeAPI]:
    fake = FakeKubeAPI(token="member-token", manifests=SEED).start()
    fake.serve_deployment("ome", "ome-controller-manager", "ghcr.io/moirai-internal/ome-manager:v0.1.5")
    fake.write_kubeconfig(tmp_path / "kubeconfigs" / "member.yaml")
    settings.OME_KUBECONFIG_DIR = tmp_path / "kubeconfigs"
    settings.OME_NAMESPACE = "ome"
    yield fake
    fake.stop()
    assert not fake.errors, "\n".join(fake.errors)


def test_an_administrator_tests_the_connection_then_registers_the_cluster(
    page: Page,
    live_server: Any,
    member: FakeKubeAPI,
    django_user_model: Any,
    transactional_db: None,
    celery_worker: Any,  # the connection test runs in a worker
) -> None:
    django_user_model.objects.create_superuser(username="root", password=PASSWORD)
    page.goto(f"{live_server.url}/accounts/login/?next=/clusters/add/")
    sign_in(page, "root")

    page.get_by_label("Name").fill("member")
    page.get_by_label("A context of a kubeconfig file").check()
    page.get_by_label("Kubeconfig and context").select_option("member.yaml#fake")
    page.get_by_role("button", name="Test the connection").click()

    expect(page.locator("#server-version")).not_to_be_empty()
    expect(page.locator("#ome-detected")).to_contain_text("v0.1.5")
    for kind in ("ClusterBaseModel", "BaseModel", "ClusterServingRuntime", "ServingRuntime", "InferenceService"):
        expect(page.get_by_role("row", name=f"{kind} yes", exact=True)).to_be_visible()
    assert page.locator("#connection-test td .error").count() == 0
    assert not Cluster.objects.filter(name="member").exists()
    page.get_by_role("button", name="Register member").click()

    expect(page.get_by_role("heading", name="member", exact=True)).to_be_visible()
    expect(page.locator(".messages")).to_contain_text("Cluster member registered")
    cluster = Cluster.objects.get(name="member")
    assert (cluster.source, cluster.context) == (Cluster.Source.KUBECONFIG, "fake")
    assert "member-token" not in page.content()


def test_a_context_the_file_does_not_define_is_refused_with_the_apis_message(
    page: Page, live_server: Any, member: FakeKubeAPI, django_user_model: Any, transactional_db: None
) -> None:
    django_user_model.objects.create_superuser(username="root", password=PASSWORD)
    page.goto(f"{live_server.url}/accounts/login/?next=/clusters/add/")
    sign_in(page, "root")
    page.get_by_label("Name").fill("member")
    page.get_by_label("A context of a kubeconfig file").check()
    page.get_by_role("button", name="Test the connection").click()

    expect(page.locator(".error").first).to_contain_text("Choose one.")
    assert not Cluster.objects.filter(name="member").exists()
