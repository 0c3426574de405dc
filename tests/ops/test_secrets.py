"""A registered cluster's credentials stay in its kubeconfig file: the bearer token in it never
reaches the database, a log line, an API response, a page, the admin, /readyz or /metrics,
whether the cluster syncs, refuses the token or is down."""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from inventory.live.cluster_watch import kind_watch
from inventory.live.resync import cluster_resync
from inventory.models import Cluster, Kind, SyncState
from tests.fakes.kube_api import FakeKubeAPI
from tests.patches.seed import documents

pytestmark = pytest.mark.django_db

TOKEN = "ome-kubeconfig-token-3f9c2a7d51e84b06"


@pytest.fixture
def fake() -> Iterator[FakeKubeAPI]:
    api = FakeKubeAPI(token=TOKEN).start()
    for obj in documents():
        api.create(obj)
    yield api
    api.stop()


@pytest.fixture
def kubeconfig(fake: FakeKubeAPI, tmp_path: Path) -> Path:
    path = fake.write_kubeconfig(tmp_path / "prod.kubeconfig", token=TOKEN)
    assert TOKEN in path.read_text()
    return path


@pytest.fixture
def everything_logged(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


def logged_text(caplog: pytest.LogCaptureFixture) -> str:
    # Messages with their arguments, and every traceback, as any handler would write them.
    formatter = logging.Formatter("%(name)s %(message)s")
    return "\n".join(formatter.format(record) for record in caplog.records)


def test_a_token_in_a_kubeconfig_never_leaves_the_file(
    fake: FakeKubeAPI,
    kubeconfig: Path,
    tmp_path: Path,
    everything_logged: pytest.LogCaptureFixture,
    settings: Any,
    django_user_model: Any,
) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "root-password")
    api = APIClient()
    api.force_authenticate(admin)

    registered = api.post("/api/v1/clusters/", {"name": "prod", "source": f"kubeconfig:{kubeconfig}"}, format="json")
    cluster = Cluster.objects.get(name="prod")
    synced = cluster_resync(cluster)
    watched = kind_watch(cluster, Kind.BASE_MODEL, stop=_never(), deadline=time.monotonic() + 1.5)
    # The same path now holds a token the server refuses, then the server is gone.
    fake.write_kubeconfig(kubeconfig, token=f"{TOKEN}-revoked")
    refused = cluster_resync(cluster)
    fake.write_kubeconfig(kubeconfig, token=TOKEN)
    fake.stop()
    down = cluster_resync(cluster)

    assert registered.status_code == 201, registered.content
    assert synced.errors == {}
    assert watched.ended == "deadline"
    assert {error.code for error in refused.errors.values()} == {"unauthorized"}
    assert {error.code for error in down.errors.values()} == {"unavailable"}
    assert SyncState.objects.filter(cluster=cluster).exclude(last_error="").count() == len(Kind.values)

    browser = Client()
    browser.force_login(admin)
    shown = {
        "POST /api/v1/clusters/": registered.content,
        **{
            url: api.get(url).content for url in ("/api/v1/clusters/", "/api/v1/clusters/prod/", "/api/v1/sync-states/")
        },
        **{
            url: browser.get(url).content
            for url in (
                "/sync/",
                "/admin/inventory/cluster/",
                f"/admin/inventory/cluster/{cluster.pk}/change/",
                "/admin/inventory/syncstate/",
                "/readyz",
                "/metrics",
            )
        },
    }
    dump = io.StringIO()
    call_command("dumpdata", stdout=dump)

    assert all(TOKEN.encode() not in content for content in shown.values()), [
        url for url, content in shown.items() if TOKEN.encode() in content
    ]
    assert str(kubeconfig).encode() in shown["/api/v1/clusters/prod/"]
    assert TOKEN not in dump.getvalue()
    assert TOKEN not in logged_text(everything_logged)
    assert any("credentials refused" in record.getMessage() for record in everything_logged.records)


def test_a_registered_cluster_stores_the_kubeconfig_path_and_context_only(
    kubeconfig: Path, django_user_model: Any
) -> None:
    user = django_user_model.objects.create_user("carol")
    user.user_permissions.add(Permission.objects.get(codename="add_cluster"))
    api = APIClient()
    api.force_authenticate(django_user_model.objects.get(pk=user.pk))

    api.post("/api/v1/clusters/", {"name": "prod", "source": f"kubeconfig:{kubeconfig}#fake"}, format="json")

    stored = Cluster.objects.filter(name="prod").values().get()
    assert (stored["kubeconfig"], stored["context"]) == (str(kubeconfig), "fake")
    assert all(TOKEN not in str(value) for value in stored.values())


def _never() -> Any:
    import threading

    return threading.Event()
