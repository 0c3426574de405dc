"""Browser tests: headless Debian Chromium driven by Playwright against pytest-django's
live_server, with a live cluster served by the fake Kubernetes API (tests.fakes.kube_api).

No `playwright install`: Chromium comes from Debian (`apt-get install -y chromium`) and the
session fixture `browser_type_launch_args` points Playwright at it. Playwright's sync API runs
an event loop in the test thread, so DJANGO_ALLOW_ASYNC_UNSAFE lets the test touch the
database too. Screenshots of every page go to artifacts/screenshots/ (gitignored); with
OME_DOCS_SCREENSHOTS=1 the README's screenshots are written to docs/screenshots/ as well.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.conf import settings as django_settings

from inventory.live.resync import cluster_resync
from inventory.models import Cluster
from lint.proving import lint_proofs_refresh
from matrix.services import matrix_rebuild
from ome_dashboard.celery import app as celery_app
from tests.fakes.kube_api import FakeKubeAPI

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
]
BASE_DIR = Path(django_settings.BASE_DIR)
ARTIFACTS = BASE_DIR / "artifacts" / "screenshots"
DOCS = BASE_DIR / "docs" / "screenshots"
DEMO_MANIFESTS = [BASE_DIR / "catalog" / "runtimes", BASE_DIR / "demo"]
OME_KINDS = {"ClusterBaseModel", "BaseModel", "ClusterServingRuntime", "ServingRuntime", "InferenceService"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # `make test` installs it (.ci/test-deps): a missing browser is an error, never a skipped gap.
    if shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists() and any("browser" in i.keywords for i in items):
        raise pytest.UsageError(f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/test-deps installs it)")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS, "headless": True}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    # A laptop screen.
    return {**browser_context_args, "viewport": {"width": 1440, "height": 900}}


@pytest.fixture(scope="session")
def demo_documents() -> list[dict[str, Any]]:
    """The demo cluster's objects (catalog runtimes + demo/), parsed once per session with
    libyaml: the pure-Python parser takes ten seconds for these 430 files."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    documents = []
    for folder in DEMO_MANIFESTS:
        for path in sorted(folder.rglob("*.yaml")):
            for document in yaml.load_all(path.read_text(), Loader=loader):
                if isinstance(document, dict) and document.get("kind") in OME_KINDS:
                    documents.append(document)
    return documents


@pytest.fixture
def fake_cluster(demo_documents: list[dict[str, Any]]) -> Iterator[FakeKubeAPI]:
    """A fake Kubernetes API server holding the demo cluster."""
    fake = FakeKubeAPI().start()
    for document in demo_documents:
        fake.apply(document)
    yield fake
    fake.stop()
    assert not fake.errors, "\n".join(fake.errors)


@pytest.fixture
def live_cluster(transactional_db: None, fake_cluster: FakeKubeAPI, tmp_path: Path, settings: Any) -> Iterator[Cluster]:
    """A live cluster registered against the fake API server, synced through the real
    kubernetes client and with its matrix built.

    Matrix updates after a change: in production an inventory change enqueues
    matrix.matrix_apply_changes on Celery and the page's version poller shows the result when
    the worker is done. Here Celery runs tasks eagerly (task_always_eager), so the update happens
    inside the request that stored the change (the patch), through the same receiver and task.
    """
    settings.MATRIX_UPDATE_ON_CHANGE = False
    settings.LINT_PROVE_ON_UPDATE = False
    kubeconfig = fake_cluster.write_kubeconfig(tmp_path / "live.kubeconfig")
    cluster = Cluster.objects.create(name="live", source=Cluster.Source.KUBECONFIG, kubeconfig=str(kubeconfig))
    result = cluster_resync(cluster)
    assert not result.errors, result.errors
    matrix_rebuild(cluster)
    lint_proofs_refresh(cluster)  # what the proving task does after the build
    settings.MATRIX_UPDATE_ON_CHANGE = True
    settings.LINT_PROVE_ON_UPDATE = True
    settings.MATRIX_POLL_SECONDS = 0.5
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield cluster
    celery_app.conf.task_always_eager = eager


@pytest.fixture
def screenshot(request: pytest.FixtureRequest) -> Callable[..., None]:
    """Save a screenshot of a page under artifacts/screenshots/ (and docs/screenshots/ when
    OME_DOCS_SCREENSHOTS is set and `docs=True`)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str, *, docs: bool = False, full_page: bool = False) -> None:
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full_page)
        if docs and os.environ.get("OME_DOCS_SCREENSHOTS"):
            DOCS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS / f"{name}.png"), full_page=full_page)

    return take
