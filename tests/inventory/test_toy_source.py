"""Adding a cluster source is one module: a module of inventory.sources that declares `SOURCE`
is found, in its order; a toy source, defined here and registered for these tests only, is
offered by the add-cluster page and the `add_cluster` command (named in its help), registered
through the page's service, described, and synced by both clients; or refused with its own
error on its own field."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from inventory.kube import aio
from inventory.live.resync import cluster_resync
from inventory.management.commands import add_cluster
from inventory.models import Cluster, Kind, Resource
from inventory.sources import SOURCES, discovered
from inventory.sources.base import ClientConfig, ClusterSource, ClusterSpec, Offer
from tests.fakes.kube_api import FakeKubeAPI
from tests.support.aio import run_alone

SEED = Path(__file__).resolve().parents[2] / "demo/seed"


class ToySource(ClusterSource):
    """A cluster served by one of `servers`, named in the `context` column."""

    key = "toy"
    member = "TOY"
    label = "Toy"
    order = 50
    live = True
    command_noun = "a toy API server"
    page_label = "A toy API server"
    field_label = "Toy API server"
    none_offered = "no toy API server runs"

    def __init__(self, servers: dict[str, FakeKubeAPI]) -> None:
        self.servers = servers

    def describe(self, cluster: Cluster) -> str:
        return f"toy API server {cluster.context}"

    def offer(self) -> Offer:
        return Offer(choices=[(name, f"{name} at {fake.url}") for name, fake in self.servers.items()])

    def spec_from_page(self, name: str, value: str, offer: Offer) -> ClusterSpec:
        if value == "stopped":
            raise ValueError("The toy API server stopped is not running.")
        return ClusterSpec(name, self.key, context=value)

    def add_arguments(self, sources: argparse._MutuallyExclusiveGroup, parser: argparse.ArgumentParser) -> None:
        sources.add_argument("--toy", metavar="SERVER")

    def spec_from_options(self, name: str, options: dict[str, Any]) -> ClusterSpec | None:
        return ClusterSpec(name, self.key, context=options["toy"]) if options["toy"] else None

    def client_config(self, cluster: Cluster) -> ClientConfig:
        return ClientConfig(self.servers[cluster.context].kubeconfig())


def test_the_sources_are_the_modules_that_declare_one_in_their_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "toy_sources"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("LABEL = 'not a source'\n")
    (package / "toy.py").write_text("from tests.inventory.test_toy_source import ToySource\n\nSOURCE = ToySource({})\n")
    (package / "early.py").write_text(
        "from tests.inventory.test_toy_source import ToySource\n\n"
        "class EarlySource(ToySource):\n    key = 'early'\n    order = 0\n\n"
        "SOURCE = EarlySource({})\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        found = discovered("toy_sources")
    finally:
        for name in [name for name in sys.modules if name.partition(".")[0] == "toy_sources"]:
            del sys.modules[name]

    assert list(found) == ["early", "toy"]
    assert list(SOURCES) == ["kubeconfig", "argocd", "manifests", "in-cluster"]


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeKubeAPI]:
    fake = FakeKubeAPI(manifests=SEED).start()
    monkeypatch.setitem(SOURCES, ToySource.key, ToySource({"alpha": fake, "stopped": fake}))
    yield fake
    fake.stop()


@pytest.mark.django_db
def test_a_toy_source_is_offered_registered_described_and_synced(admin_client: Client, toy: FakeKubeAPI) -> None:
    page = admin_client.get("/clusters/add/").content.decode()
    form = {"name": "edge", "source": "toy", "toy": "alpha", "confirm": "1"}

    registered = admin_client.post("/clusters/add/", form)
    cluster = Cluster.objects.get(name="edge")
    result = cluster_resync(cluster)

    assert "A toy API server" in page
    assert f'<option value="alpha">alpha at {toy.url}</option>' in page
    assert registered.status_code == 302
    assert (cluster.source, cluster.source == Cluster.Source.TOY, cluster.is_live) == ("toy", True, True)
    assert "toy API server alpha" in admin_client.get("/sync/").content.decode()
    assert result.errors == {}
    assert Resource.objects.filter(cluster=cluster).count() == sum(c.added for c in result.applied.counts.values()) > 0


def test_the_asyncio_client_of_the_watches_reads_a_toy_cluster_too(toy: FakeKubeAPI) -> None:
    cluster = Cluster(name="edge", source="toy", context="alpha")

    async def listed() -> int:
        api = await aio.client_for(cluster)
        try:
            items, _ = await aio.list_kind(api, Kind.CLUSTER_SERVING_RUNTIME)
        finally:
            await aio.close(api)
        return len(items)

    assert run_alone(listed()) == len(toy.objects("clusterservingruntimes")) > 0


@pytest.mark.django_db
def test_a_toy_source_refuses_with_its_own_error_on_its_own_field(admin_client: Client, toy: FakeKubeAPI) -> None:
    refused = admin_client.post("/clusters/add/", {"name": "edge", "source": "toy", "toy": "stopped", "confirm": "1"})

    assert refused.status_code == 400
    assert refused.context["form"].errors == {"toy": ["The toy API server stopped is not running."]}
    assert not Cluster.objects.exists()


@pytest.mark.django_db
def test_the_add_cluster_command_takes_the_toy_source(toy: FakeKubeAPI) -> None:
    out = StringIO()

    call_command("add_cluster", "edge", "--toy", "alpha", stdout=out)
    usage = add_cluster.Command().create_parser("manage.py", "add_cluster").format_help()

    assert out.getvalue().strip() == "cluster edge: toy API server alpha"
    assert "manifest folders, the in-cluster service account or a toy API server." in " ".join(usage.split())
