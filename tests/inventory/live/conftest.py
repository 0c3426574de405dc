"""Fixtures for the live-cluster tests: fake API servers and clusters that point at them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from inventory.models import Cluster
from tests.fakes.kube_api import FakeKubeAPI


@pytest.fixture(autouse=True)
def _fast_watches(settings: Any) -> None:
    # Backoff in milliseconds keeps reconnect tests fast; the matrix stays out of these tests.
    settings.OME_WATCH_BACKOFF_BASE = 0.01
    settings.OME_WATCH_BACKOFF_MAX = 0.05
    settings.OME_WATCH_LEASE = 60
    settings.MATRIX_UPDATE_ON_CHANGE = False


@pytest.fixture
def start_fake() -> Iterator[Callable[..., FakeKubeAPI]]:
    """Start fake API servers on free loopback ports; each is checked and stopped after the test."""
    started: list[FakeKubeAPI] = []

    def start(**options: Any) -> FakeKubeAPI:
        fake = FakeKubeAPI(**options).start()
        started.append(fake)
        return fake

    yield start
    for fake in started:
        left_open = fake.active_watches()
        fake.stop()
        assert left_open == 0, "a test left a watch open"
        assert not fake.errors, "\n".join(fake.errors)


@pytest.fixture
def fake(start_fake: Callable[..., FakeKubeAPI]) -> FakeKubeAPI:
    return start_fake()


@pytest.fixture
def cluster_for(tmp_path: Path) -> Callable[..., Cluster]:
    """A kubeconfig cluster for a fake, through a kubeconfig file the fake writes."""

    def make(fake: FakeKubeAPI, name: str = "live", *, token: str | None = None) -> Cluster:
        path = fake.write_kubeconfig(tmp_path / f"{name}.kubeconfig", token=token)
        return Cluster.objects.create(name=name, source=Cluster.Source.KUBECONFIG, kubeconfig=str(path))

    return make


@pytest.fixture
def cluster(fake: FakeKubeAPI, cluster_for: Callable[..., Cluster]) -> Cluster:
    return cluster_for(fake)
