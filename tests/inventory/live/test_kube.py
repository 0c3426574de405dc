"""inventory.kube against the fake API server, through the real kubernetes client."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from inventory import kube
from inventory.kube import KubeConfigError, KubeConflict, KubeGone, KubeNotFound, KubeUnauthorized, KubeUnavailable
from inventory.models import Cluster, Kind
from tests.fakes.kube_api import FakeKubeAPI
from tests.inventory.live.objects import model, one_of_each, runtime
from tests.support.net import free_port


def api_for(fake: FakeKubeAPI, tmp_path: Path, *, token: str | None = None) -> kube.client.CustomObjectsApi:
    path = fake.write_kubeconfig(tmp_path / "kubeconfig", token=token)
    return kube.client_for(Cluster(name="c", source=Cluster.Source.KUBECONFIG, kubeconfig=str(path)))


@pytest.fixture
def api(fake: FakeKubeAPI, tmp_path: Path):
    api = api_for(fake, tmp_path)
    yield api
    kube.close(api)


def test_list_kind_returns_every_object_of_the_kind_and_the_list_resource_version(fake, api) -> None:
    for obj in one_of_each():
        fake.create(obj)

    items, resource_version = kube.list_kind(api, Kind.BASE_MODEL)

    assert sorted((o["metadata"]["namespace"], o["metadata"]["name"]) for o in items) == [
        ("team-a", "tuned"),
        ("team-b", "tuned"),
    ]
    assert {o["kind"] for o in items} == {"BaseModel"}
    assert resource_version == fake.resource_version


def test_list_kind_pages_through_limit_and_continue(fake, api) -> None:
    for index in range(7):
        fake.create(model(f"m{index}"))

    items, resource_version = kube.list_kind(api, Kind.CLUSTER_BASE_MODEL, page_size=3)

    assert [o["metadata"]["name"] for o in items] == [f"m{index}" for index in range(7)]
    lists = [r for r in fake.requests if r.verb == "list"]
    assert [r.query["limit"] for r in lists] == ["3", "3", "3"]
    assert "continue" not in lists[0].query
    assert all(r.query["continue"] for r in lists[1:])
    assert resource_version == fake.resource_version


@pytest.mark.parametrize(
    ("status", "error_class", "code", "message"),
    [
        (401, KubeUnauthorized, "unauthorized", "credentials refused (401)"),
        (403, KubeUnauthorized, "unauthorized", "permission denied on clusterbasemodels (403)"),
        (404, KubeNotFound, "not_found", "OME CRD clusterbasemodels not installed (404)"),
        (410, KubeGone, "gone", "resourceVersion expired (410)"),
        (500, KubeUnavailable, "unavailable", "API server error (500)"),
        (429, KubeUnavailable, "unavailable", "API server error (429)"),
    ],
    ids=lambda value: str(value) if isinstance(value, int) else None,
)
def test_list_errors_become_kube_errors_with_code_status_and_message(fake, api, status, error_class, code, message):
    fake.fail_next(1, status, kinds="clusterbasemodels", verbs="list")

    with pytest.raises(error_class) as caught:
        kube.list_kind(api, Kind.CLUSTER_BASE_MODEL)

    assert caught.value.code == code
    assert caught.value.http_status == status
    # A fixed text: the server's own message goes to the log only, redacted.
    assert caught.value.message == message


def test_missing_crd_is_named_in_the_error(fake, api) -> None:
    fake.remove_kind("clusterservingruntimes")

    with pytest.raises(KubeNotFound, match=r"^OME CRD clusterservingruntimes not installed \(404\)$"):
        kube.list_kind(api, Kind.CLUSTER_SERVING_RUNTIME)


def test_server_down_is_unavailable(tmp_path: Path) -> None:
    fake = FakeKubeAPI(port=free_port())  # never started: nothing listens on its port
    api = api_for(fake, tmp_path)

    with pytest.raises(KubeUnavailable) as caught:
        kube.list_kind(api, Kind.CLUSTER_BASE_MODEL)

    assert caught.value.http_status == 503
    assert caught.value.message == "API server unreachable (MaxRetryError)"


def test_refused_credentials_do_not_leak_the_token_into_the_message(start_fake, tmp_path: Path) -> None:
    fake = start_fake(token="the-right-one")
    api = api_for(fake, tmp_path, token="s3cret-wrong-token")

    with pytest.raises(KubeUnauthorized) as caught:
        kube.list_kind(api, Kind.BASE_MODEL)

    assert caught.value.message == "credentials refused (401)"
    assert "s3cret" not in repr(caught.value)
    assert "s3cret" not in str(caught.value)


def test_client_for_uses_the_context_named_by_the_cluster(start_fake, tmp_path: Path) -> None:
    first, second = start_fake(), start_fake()
    second.create(model("only-in-second"))
    config = first.kubeconfig()
    config["clusters"].append({"name": "other", "cluster": {"server": second.url}})
    config["contexts"].append({"name": "other", "context": {"cluster": "other", "user": "fake"}})
    path = tmp_path / "two-contexts.kubeconfig"
    path.write_text(json.dumps(config))
    cluster = Cluster(name="c", source=Cluster.Source.KUBECONFIG, kubeconfig=str(path), context="other")

    api = kube.client_for(cluster)
    items, _ = kube.list_kind(api, Kind.CLUSTER_BASE_MODEL)
    kube.close(api)

    assert [o["metadata"]["name"] for o in items] == ["only-in-second"]


def test_client_for_refuses_an_unusable_kubeconfig_or_a_missing_service_account(tmp_path: Path) -> None:
    missing = Cluster(name="c", source=Cluster.Source.KUBECONFIG, kubeconfig=str(tmp_path / "nope"))
    in_cluster = Cluster(name="c", source=Cluster.Source.IN_CLUSTER)
    manifests = Cluster(name="c", source=Cluster.Source.MANIFESTS, manifests=["demo"])

    for cluster in (missing, in_cluster, manifests):
        with pytest.raises(KubeConfigError) as caught:
            kube.client_for(cluster)
        assert caught.value.code == "bad_config"


def test_get_object_and_not_found(fake, api) -> None:
    fake.create(runtime("rt", "team-a"))

    obj = kube.get_object(api, Kind.SERVING_RUNTIME, "team-a", "rt")

    assert obj["metadata"]["name"] == "rt"
    assert obj["kind"] == "ServingRuntime"
    with pytest.raises(KubeNotFound, match=re.escape("servingruntimes: not found (404)")):
        kube.get_object(api, Kind.SERVING_RUNTIME, "team-b", "rt")


def test_patch_object_sends_a_merge_patch_and_honours_the_resource_version_precondition(fake, api) -> None:
    seen = fake.create(model("m1"))["metadata"]["resourceVersion"]
    patch = {"metadata": {"resourceVersion": seen}, "spec": {"modelArchitecture": "MistralForCausalLM"}}

    patched = kube.patch_object(api, Kind.CLUSTER_BASE_MODEL, "", "m1", patch)

    assert patched["spec"]["modelArchitecture"] == "MistralForCausalLM"
    assert patched["spec"]["storage"] == {"storageUri": "hf://org/m1"}  # merged, not replaced
    assert fake.requests[-1].headers["content-type"] == "application/merge-patch+json"
    with pytest.raises(KubeConflict) as caught:
        kube.patch_object(api, Kind.CLUSTER_BASE_MODEL, "", "m1", patch)  # `seen` is stale now
    assert (caught.value.code, caught.value.http_status) == ("conflict", 409)


def test_kube_error_hierarchy_carries_codes_and_statuses() -> None:
    errors: list[Callable[[str], kube.KubeError]] = [
        KubeUnavailable,
        KubeUnauthorized,
        KubeNotFound,
        KubeConflict,
        KubeGone,
        KubeConfigError,
    ]

    assert {cls("x").code: cls("x").http_status for cls in errors} == {
        "unavailable": 503,
        "unauthorized": 401,
        "not_found": 404,
        "conflict": 409,
        "gone": 410,
        "bad_config": 500,
    }
    assert all(issubclass(cls, kube.KubeError) for cls in errors)  # type: ignore[arg-type]
