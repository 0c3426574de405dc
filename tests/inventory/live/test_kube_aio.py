"""inventory.kube.aio (the watch hub's lists and watches) against the fake API server, through
the real kubernetes.aio client."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from inventory.kube import KubeConfigError, KubeGone, KubeNotFound, KubeUnauthorized, KubeUnavailable
from inventory.kube import aio as kube
from inventory.models import Cluster, Kind
from tests.fakes.kube_api import FakeKubeAPI
from tests.inventory.live.objects import model
from tests.support.aio import run_alone
from tests.support.net import free_port

T = TypeVar("T")


def run_with_api(fake: FakeKubeAPI, tmp_path: Path, use: Callable[[Any], Awaitable[T]], **options: Any) -> T:
    """Run `use(api)` on a fresh event loop with a client for the fake (closed after)."""
    path = fake.write_kubeconfig(tmp_path / "kubeconfig", **options)
    cluster = Cluster(name="c", source=Cluster.Source.KUBECONFIG, kubeconfig=str(path))

    async def main() -> T:
        api = await kube.client_for(cluster)
        try:
            return await use(api)
        finally:
            await kube.close(api)

    return run_alone(main())


async def collect(stream: Any, count: int | None = None) -> list[tuple[str, str, str]]:
    events = []
    async with contextlib.aclosing(stream):
        async for event_type, obj in stream:
            events.append((event_type, obj.get("metadata", {}).get("name", ""), obj["metadata"]["resourceVersion"]))
            if len(events) == count:
                break
    return events


def test_list_kind_pages_through_every_object(fake, tmp_path) -> None:
    for index in range(7):
        fake.create(model(f"m{index}"))

    items, resource_version = run_with_api(
        fake, tmp_path, lambda api: kube.list_kind(api, Kind.CLUSTER_BASE_MODEL, page_size=3)
    )

    assert sorted(item["metadata"]["name"] for item in items) == [f"m{i}" for i in range(7)]
    assert {item["kind"] for item in items} == {"ClusterBaseModel"}
    assert resource_version == fake.resource_version
    assert [r.query.get("limit") for r in fake.requests if r.verb == "list"] == ["3", "3", "3"]


def test_watch_kind_yields_changes_and_bookmarks_from_the_resource_version(fake, tmp_path) -> None:
    start = fake.resource_version
    fake.create(model("m1"))
    fake.patch("clusterbasemodels", "m1", {"spec": {"modelArchitecture": "X"}})
    fake.delete("clusterbasemodels", "m1")
    connected: list[float] = []

    async def use(api: Any) -> list[tuple[str, str, str]]:
        async def on_connect() -> None:
            connected.append(time.monotonic())
            fake.bookmark("clusterbasemodels")

        return await collect(kube.watch_kind(api, Kind.CLUSTER_BASE_MODEL, start, 5, on_connect=on_connect), 4)

    events = run_with_api(fake, tmp_path, use)

    assert [(t, n) for t, n, _ in events] == [("ADDED", "m1"), ("MODIFIED", "m1"), ("DELETED", "m1"), ("BOOKMARK", "")]
    assert [rv for _, _, rv in events[:3]] == [e["resourceVersion"] for e in fake.events("clusterbasemodels")]
    assert events[3][2] == fake.resource_version
    assert connected
    watch = next(r for r in fake.requests if r.verb == "watch")
    assert watch.query["resourceVersion"] == start
    assert watch.query["timeoutSeconds"] == "5"
    assert watch.query["allowWatchBookmarks"] == "true"
    assert watch.headers["authorization"] == "Bearer test-token"


def test_a_stream_the_server_ends_ends_without_an_error(fake, tmp_path) -> None:
    events = run_with_api(
        fake, tmp_path, lambda api: collect(kube.watch_kind(api, Kind.BASE_MODEL, fake.resource_version, 1))
    )

    assert events == []


def test_watch_kind_raises_gone_for_an_expired_resource_version(fake, tmp_path) -> None:
    old = fake.resource_version
    fake.create(model("m1"))
    fake.compact()

    with pytest.raises(KubeGone):
        run_with_api(fake, tmp_path, lambda api: collect(kube.watch_kind(api, Kind.CLUSTER_BASE_MODEL, old, 5)))


@pytest.mark.parametrize(
    ("status", "error", "message"),
    [
        (500, KubeUnavailable, "API server error (500)"),
        (503, KubeUnavailable, "API server error (503)"),
        (401, KubeUnauthorized, "credentials refused (401)"),
    ],
)
def test_an_error_answer_to_a_watch_raises_the_kube_error_of_its_status(
    fake, tmp_path, status: int, error: type, message: str
) -> None:
    fake.fail_next(status=status, verbs="watch")

    with pytest.raises(error) as caught:
        run_with_api(fake, tmp_path, lambda api: collect(kube.watch_kind(api, Kind.BASE_MODEL, "", 5)))

    assert caught.value.message == message


def test_a_missing_crd_is_not_found(fake, tmp_path) -> None:
    fake.remove_kind("servingruntimes")

    with pytest.raises(KubeNotFound, match="OME CRD servingruntimes not installed"):
        run_with_api(fake, tmp_path, lambda api: kube.list_kind(api, Kind.SERVING_RUNTIME))


def test_a_stream_cut_mid_way_raises_unavailable(fake, tmp_path) -> None:
    fake.create(model("m1"))
    fake.create(model("m2"))
    fake.drop_watch_after(1, kinds="clusterbasemodels")

    with pytest.raises(KubeUnavailable, match="connection to the API server broke"):
        run_with_api(fake, tmp_path, lambda api: collect(kube.watch_kind(api, Kind.CLUSTER_BASE_MODEL, "", 5)))


def test_an_unreachable_server_is_unavailable_for_the_whole_cluster(tmp_path) -> None:
    down = FakeKubeAPI(port=free_port())  # never started

    with pytest.raises(KubeUnavailable) as caught:
        run_with_api(down, tmp_path, lambda api: kube.list_kind(api, Kind.BASE_MODEL))

    assert caught.value.message.startswith("API server unreachable (")
    assert caught.value.cluster_wide


def test_a_hung_server_fails_the_watch_after_its_timeout_and_margin(fake, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(kube, "WATCH_READ_MARGIN", 0.5)
    fake.delay(30, verbs="watch")
    started = time.monotonic()

    with pytest.raises(KubeUnavailable, match="did not answer in time"):
        run_with_api(fake, tmp_path, lambda api: collect(kube.watch_kind(api, Kind.BASE_MODEL, "", 1)))

    assert time.monotonic() - started < 10
    fake.delay(0)


def test_cancelling_a_silent_watch_ends_it_at_once(fake, tmp_path) -> None:
    async def use(api: Any) -> float:
        task = asyncio.ensure_future(collect(kube.watch_kind(api, Kind.SERVING_RUNTIME, fake.resource_version, 30)))
        while not fake.active_watches("servingruntimes"):
            await asyncio.sleep(0.01)  # polling the fake from the loop that must keep running
        started = time.monotonic()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return time.monotonic() - started

    assert run_with_api(fake, tmp_path, use) < 2
    assert fake.wait_for(lambda: fake.active_watches() == 0)


def test_a_watch_needs_a_timeout(fake, tmp_path) -> None:
    with pytest.raises(ValueError, match="timeout_seconds"):
        run_with_api(fake, tmp_path, lambda api: collect(kube.watch_kind(api, Kind.BASE_MODEL, "1", 0)))


def test_an_unreadable_kubeconfig_is_a_config_error(tmp_path) -> None:
    cluster = Cluster(name="c", source=Cluster.Source.KUBECONFIG, kubeconfig=str(tmp_path / "missing"))

    with pytest.raises(KubeConfigError, match="cannot"):
        run_alone(kube.client_for(cluster))
