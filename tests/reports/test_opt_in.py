"""Reports are opt-in per cluster, off by default: chosen on the add-cluster page, changed in
the admin (the one field it may change on a registered cluster), or named by
OME_POLICY_REPORTS for the clusters of OME_CLUSTERS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from inventory.models import Cluster
from inventory.services import clusters_register_from_settings
from tests.fakes.kube_api import FakeKubeAPI


@pytest.fixture
def member(settings: Any, tmp_path: Path) -> Iterator[FakeKubeAPI]:
    with FakeKubeAPI() as fake:
        fake.write_kubeconfig(tmp_path / "member.yaml")
        settings.OME_KUBECONFIG_DIR = tmp_path
        yield fake


@pytest.mark.django_db
@pytest.mark.parametrize(("ticked", "expected"), [({}, False), ({"policy_reports": "on"}, True)])
def test_the_add_cluster_page_registers_the_choice_off_by_default(
    admin_client: Client, member: FakeKubeAPI, ticked: dict[str, str], expected: bool
) -> None:
    form = {"name": "member", "source": "kubeconfig", "kubeconfig": "member.yaml#fake", "confirm": "1", **ticked}

    assert "Write PolicyReports" in admin_client.get("/clusters/add/").content.decode()
    assert admin_client.post("/clusters/add/", form).status_code == 302
    assert Cluster.objects.get(name="member").policy_reports is expected


@pytest.mark.django_db
def test_the_admin_changes_the_choice_and_nothing_else(admin_client: Client) -> None:
    cluster = Cluster.objects.create(name="live", source=Cluster.Source.KUBECONFIG, kubeconfig="/x/live.yaml")
    url = f"/admin/inventory/cluster/{cluster.pk}/change/"

    response = admin_client.post(url, {"policy_reports": "on", "kubeconfig": "/elsewhere.yaml"})

    assert response.status_code == 302
    cluster.refresh_from_db()
    assert (cluster.policy_reports, cluster.kubeconfig) == (True, "/x/live.yaml")


@pytest.mark.django_db
def test_ome_policy_reports_names_the_settings_clusters_that_write_reports(settings: Any) -> None:
    settings.OME_CLUSTERS = "a=manifests:demo;b=manifests:demo"
    Cluster.objects.create(name="b", source=Cluster.Source.MANIFESTS, policy_reports=True)

    settings.OME_POLICY_REPORTS = []
    assert {c.name: c.policy_reports for c in clusters_register_from_settings()} == {"a": False, "b": True}
    settings.OME_POLICY_REPORTS = ["a"]
    assert {c.name: c.policy_reports for c in clusters_register_from_settings()} == {"a": True, "b": False}
