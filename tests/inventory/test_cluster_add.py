"""The add-cluster page without a browser: who may use it, the choices it offers (no
credential among them), the connection test, and a registration equal to the API's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from celery.worker import WorkController
from django.contrib.auth.models import Permission
from django.test import Client

from inventory.models import Cluster
from tests.fakes.kube_api import FakeKubeAPI
from tests.support.access import grant

SEED = Path(__file__).resolve().parents[2] / "demo/seed"


@pytest.fixture
def member(settings: Any, tmp_path: Path) -> Iterator[FakeKubeAPI]:
    fake = FakeKubeAPI(token="member-token", manifests=SEED).start()
    fake.write_kubeconfig(tmp_path / "member.yaml")
    (tmp_path / "broken.yaml").write_text("not: a kubeconfig\n")
    settings.OME_KUBECONFIG_DIR = tmp_path
    yield fake
    fake.stop()


@pytest.mark.django_db
def test_only_who_may_add_clusters_gets_the_page(django_user_model: Any, member: FakeKubeAPI) -> None:
    viewer = Client()
    viewer.force_login(django_user_model.objects.create_user(username="viewer", password="x" * 20))

    assert Client().get("/clusters/add/").status_code == 302
    assert viewer.get("/clusters/add/").status_code == 403


@pytest.mark.django_db
def test_the_page_offers_contexts_and_folders_and_no_credential(admin_client: Client, member: FakeKubeAPI) -> None:
    page = admin_client.get("/clusters/add/").content.decode()

    assert '<option value="member.yaml#fake">member.yaml: context fake</option>' in page
    assert '<option value="catalog/runtimes">catalog/runtimes</option>' in page
    assert "broken.yaml" in page  # named as a file that cannot be used
    assert "member-token" not in page


@pytest.mark.django_db(transaction=True)  # the worker's thread closes its connections
def test_the_connection_test_reads_the_cluster_and_stores_nothing(
    admin_client: Client, member: FakeKubeAPI, celery_worker: WorkController
) -> None:
    form = {"name": "member", "source": "kubeconfig", "kubeconfig": "member.yaml#fake", "test": "1"}

    page = admin_client.post("/clusters/add/", form).content.decode()

    assert 'id="server-version"' in page
    assert page.count("<td>yes</td>") == 5
    assert "Register member" in page
    assert not Cluster.objects.exists()


@pytest.mark.django_db
def test_the_connection_test_runs_in_a_worker_not_in_the_web_process(
    admin_client: Client, member: FakeKubeAPI, settings: Any
) -> None:
    """Building a client may run an Argo CD Secret's exec plugin: without a worker, the page says
    that none ran the test, and the cluster was never asked anything by the web process."""
    settings.OME_CONNECTION_TEST_TIMEOUT = 1
    form = {"name": "member", "source": "kubeconfig", "kubeconfig": "member.yaml#fake", "test": "1"}

    page = admin_client.post("/clusters/add/", form).content.decode()

    assert "no worker ran the connection test within 1 s" in page
    assert member.requests == []


@pytest.mark.django_db
def test_confirming_registers_as_the_api_does(admin_client: Client, member: FakeKubeAPI) -> None:
    form = {"name": "member", "source": "kubeconfig", "kubeconfig": "member.yaml#fake", "confirm": "1"}

    response = admin_client.post("/clusters/add/", form)
    again = admin_client.post("/clusters/add/", form)
    folder = admin_client.post(
        "/clusters/add/", {"name": "seed", "source": "manifests", "manifests": "/etc", "confirm": "1"}
    )

    assert response.status_code == 302
    cluster = Cluster.objects.get(name="member")
    assert (cluster.source, Path(cluster.kubeconfig).name, cluster.context) == ("kubeconfig", "member.yaml", "fake")
    assert again.status_code == 400
    assert "A cluster named &#x27;member&#x27; already exists." in again.content.decode()
    assert folder.status_code == 400
    assert not Cluster.objects.filter(name="seed").exists()


@pytest.mark.django_db
def test_the_page_refuses_a_registration_that_leaves_its_author_without_a_role(
    django_user_model: Any, member: FakeKubeAPI, settings: Any
) -> None:
    """As the API and the admin do: a 4xx naming the problem, and nothing registered."""
    settings.API_ANONYMOUS_READ = False  # else every user reads every cluster
    registrar = django_user_model.objects.create_user(username="registrar", password="x" * 20)
    registrar.user_permissions.add(Permission.objects.get(codename="add_cluster"))
    client = Client()
    client.force_login(registrar)
    form = {"name": "member", "source": "kubeconfig", "kubeconfig": "member.yaml#fake", "confirm": "1"}

    refused = client.post("/clusters/add/", form)
    grant(registrar, "admin", cluster="member")
    registered = client.post("/clusters/add/", form)

    assert refused.status_code == 400
    assert "would leave you without a role on it" in refused.content.decode()
    assert registered.status_code == 302
    assert Cluster.objects.filter(name="member").count() == 1
