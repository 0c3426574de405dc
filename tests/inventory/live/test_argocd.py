"""Clusters from Argo CD: a hub (the test Kubernetes API server) serves Argo CD cluster Secrets
for two member clusters (two more servers, each requiring its own token). The members are
registered, synced and shown in the fleet view; they change and disappear as the Secrets do;
their credentials are read from the hub at use and are nowhere in the database or the pages;
kinds of credentials the client cannot use are refused with a message naming the Secret."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client
from pytest_django import Settings
from rest_framework.test import APIClient

from inventory.argocd import Discovery, argocd_clusters_sync
from inventory.kube import KubeUnavailable, aio
from inventory.kube.argocd import SECRET_TYPE_LABEL, ArgoCDSecretInvalid, kubeconfig_of
from inventory.kube.exec_plugins import RUNNER, SECRET_NAMES
from inventory.live.resync import cluster_resync
from inventory.models import Cluster, Resource
from matrix.services import matrix_rebuild
from tests.fakes.kube_api import FakeKubeAPI
from tests.support.aio import run_alone

ROOT = Path(__file__).resolve().parents[3]
SEED = ROOT / "demo/seed"
NAMESPACE = "argocd"
CLUSTER_LABELS = {SECRET_TYPE_LABEL: "cluster"}
ARN = "arn:aws:iam::123456789012:role/argocd"


def secret(name: str, server: str, config: Any) -> dict[str, str]:
    return {"name": name, "server": server, "config": json.dumps(config)}


@pytest.fixture
def hub(start_fake: Callable[..., FakeKubeAPI], settings: Settings, tmp_path: Path) -> FakeKubeAPI:
    hub = start_fake(token="hub-token")
    hub.write_kubeconfig(tmp_path / "hub.yaml")
    settings.OME_KUBECONFIG_DIR = tmp_path
    settings.OME_ARGOCD_HUB = "kubeconfig:hub.yaml"
    settings.OME_ARGOCD_NAMESPACE = NAMESPACE
    return hub


@pytest.fixture
def members(start_fake: Callable[..., FakeKubeAPI]) -> tuple[FakeKubeAPI, FakeKubeAPI]:
    return start_fake(token="prod-token", manifests=SEED), start_fake(token="lab-token", manifests=SEED)


@pytest.fixture
def synced(db: None, hub: FakeKubeAPI, members: tuple[FakeKubeAPI, FakeKubeAPI]) -> Discovery:
    """The hub serves both members' cluster Secrets (prod-eu and Lab Cluster), registered."""
    prod, lab = members
    hub.serve_secrets(
        NAMESPACE,
        {
            "cluster-prod": secret(
                "prod-eu", prod.url, {"bearerToken": "prod-token", "tlsClientConfig": {"insecure": False}}
            ),
            "cluster-lab": secret("Lab Cluster", lab.url, {"bearerToken": "lab-token"}),
        },
        CLUSTER_LABELS,
    )
    return argocd_clusters_sync()


def test_argocd_members_are_registered_synced_and_shown_in_the_fleet(
    synced: Discovery, members: tuple[FakeKubeAPI, FakeKubeAPI]
) -> None:
    clusters = {cluster.name: cluster for cluster in Cluster.objects.filter(source=Cluster.Source.ARGOCD)}
    for cluster in clusters.values():
        result = cluster_resync(cluster)
        assert result.errors == {}
        matrix_rebuild(cluster)
    page = Client().get("/fleet/").content.decode()
    api = APIClient().get("/api/v1/fleet/").json()

    assert sorted(synced.added) == ["lab-cluster", "prod-eu"]
    assert clusters["prod-eu"].argocd_secret == f"{NAMESPACE}/cluster-prod"
    assert clusters["prod-eu"].describe_source() == f"Argo CD cluster Secret {NAMESPACE}/cluster-prod"
    for name in clusters:
        assert Resource.objects.filter(cluster=clusters[name]).count() == 2
        assert name in page
    assert {item["cluster"] for item in api["clusters"]} == {"prod-eu", "lab-cluster"}
    stored = json.dumps(list(Cluster.objects.values()), default=str)
    assert "prod-token" not in stored
    assert "lab-token" not in stored
    assert "prod-token" not in page
    assert {headers.get("authorization") for _m, _p, _q, headers in members[0].requests} == {"Bearer prod-token"}


def test_members_change_and_disappear_as_their_secrets_do(
    synced: Discovery, hub: FakeKubeAPI, members: tuple[FakeKubeAPI, FakeKubeAPI]
) -> None:
    prod, lab = members
    registered = Cluster.objects.create(name="edge", source=Cluster.Source.MANIFESTS, manifests=[str(SEED)])

    hub.serve_secrets(
        NAMESPACE,
        {
            "cluster-prod": secret("prod-west", prod.url, {"bearerToken": "prod-token"}),
            "cluster-edge": secret("edge", lab.url, {"bearerToken": "lab-token"}),
        },
        CLUSTER_LABELS,
    )
    found = argocd_clusters_sync()

    assert found.kept == ["prod-west"]
    assert found.removed == ["lab-cluster"]
    assert found.skipped == [f"{NAMESPACE}/cluster-edge: the name 'edge' is taken by another cluster"]
    names = set(Cluster.objects.values_list("name", flat=True))
    assert names == {"prod-west", "edge"}
    assert Cluster.objects.get(name="edge") == registered
    assert Cluster.objects.get(name="edge").source == Cluster.Source.MANIFESTS


def test_credentials_are_read_at_use_and_a_bad_secret_is_named(
    synced: Discovery, hub: FakeKubeAPI, members: tuple[FakeKubeAPI, FakeKubeAPI]
) -> None:
    prod = members[0]
    cluster = Cluster.objects.get(name="prod-eu")
    hub.serve_secrets(
        NAMESPACE,
        {"cluster-prod": secret("prod-eu", prod.url, {"username": "admin", "password": "hunter2"})},
        CLUSTER_LABELS,
    )

    result = cluster_resync(cluster)

    messages = {error.message for error in result.errors.values()}
    assert messages == {
        f"Argo CD cluster Secret {NAMESPACE}/cluster-prod: basic authentication (config.username/password) "
        "is not supported by the kubernetes client"
    }
    assert not any("hunter2" in message for message in messages)


def test_the_kinds_of_credentials_become_a_kubeconfig() -> None:
    tls = {"caData": "Q0E=", "certData": "Q0VSVA==", "keyData": "S0VZ", "serverName": "api.internal"}
    by_cert = kubeconfig_of("argocd/a", "https://10.0.0.1", {"tlsClientConfig": tls})
    by_aws = kubeconfig_of(
        "argocd/b", "https://eks", {"awsAuthConfig": {"clusterName": "prod", "roleARN": ARN, "profile": "hub"}}
    )
    by_exec = kubeconfig_of(
        "argocd/c",
        "https://gke",
        {"execProviderConfig": {"command": "argocd-k8s-auth", "args": ["azure"], "env": {"AZURE_TENANT_ID": "t"}}},
    )

    assert by_cert["clusters"][0]["cluster"] == {
        "server": "https://10.0.0.1",
        "certificate-authority-data": "Q0E=",
        "tls-server-name": "api.internal",
    }
    assert by_cert["users"][0]["user"] == {"client-certificate-data": "Q0VSVA==", "client-key-data": "S0VZ"}
    aws = by_aws["users"][0]["user"]["exec"]
    # Run by the isolated interpreter's runner (inventory/kube/exec_runner.py), minimal environment.
    assert (aws["command"], aws["args"][:2], aws["args"][3:]) == (
        sys.executable,
        ["-I", str(RUNNER)],
        ["aws", "eks", "get-token", "--cluster-name", "prod", "--role-arn", ARN, "--profile", "hub"],
    )
    assert by_exec["users"][0]["user"]["exec"]["env"] == [
        {"name": "AZURE_TENANT_ID", "value": "t"},
        {"name": SECRET_NAMES, "value": "AZURE_TENANT_ID"},
    ]


@pytest.mark.parametrize(
    ("config", "why"),
    [
        ({}, "no credentials"),
        ({"bearerToken": "t", "proxyUrl": "http://p"}, "config.proxyUrl is not supported"),
        (
            {"execProviderConfig": {"command": "/bin/sh", "args": ["-c", "id"]}},
            "is not one of OME_ARGOCD_EXEC_COMMANDS",
        ),
        # The aws CLI's arguments could copy the dashboard's files (kubeconfigs) anywhere:
        # awsAuthConfig runs `aws eks get-token` itself; a Secret may not choose aws's arguments.
        (
            {"execProviderConfig": {"command": "aws", "args": ["s3", "cp", "/etc/ome/kubeconfigs", "s3://x"]}},
            "config.execProviderConfig.command 'aws' is not one of OME_ARGOCD_EXEC_COMMANDS",
        ),
        ({"tlsClientConfig": {"certData": "Q0VSVA=="}}, "certData and keyData go together"),
        ({"awsAuthConfig": {"roleARN": "arn:r"}}, "awsAuthConfig.clusterName is required"),
        ({"awsAuthConfig": {"clusterName": "p", "region": "x"}}, "config.awsAuthConfig.region is not supported"),
        # The child's PATH would choose which `kubelogin` runs; loader variables inject code into it.
        (
            {"execProviderConfig": {"command": "kubelogin", "args": ["get-token"], "env": {"PATH": "/tmp/elsewhere"}}},
            "config.execProviderConfig.env.PATH is not allowed for kubelogin",
        ),
        (
            {"execProviderConfig": {"command": "kubelogin", "args": ["get-token"], "env": {"LD_PRELOAD": "/tmp/x.so"}}},
            "config.execProviderConfig.env.LD_PRELOAD is not allowed for kubelogin",
        ),
    ],
)
def test_unsupported_credentials_are_refused_naming_the_secret(config: dict[str, Any], why: str) -> None:
    with pytest.raises(ArgoCDSecretInvalid) as refused:
        kubeconfig_of("argocd/x", "https://k", config)

    assert refused.value.message.startswith("Argo CD cluster Secret argocd/x: ")
    assert why in refused.value.message


def test_the_asyncio_client_of_the_watch_hub_reads_a_member_through_its_secret(
    synced: Discovery, members: tuple[FakeKubeAPI, FakeKubeAPI]
) -> None:
    cluster = Cluster.objects.get(name="lab-cluster")

    async def runtimes() -> list[str]:
        api = await aio.client_for(cluster)
        try:
            items, _version = await aio.list_kind(api, "ClusterServingRuntime")
        finally:
            await aio.close(api)
        return [obj["metadata"]["name"] for obj in items]

    assert run_alone(runtimes()) == ["srt-qwen-image-pipeline"]
    assert {headers.get("authorization") for _m, _p, _q, headers in members[1].requests} == {"Bearer lab-token"}


def test_a_secret_already_registered_is_not_registered_twice_from_the_page(
    synced: Discovery, hub: FakeKubeAPI, admin_client: Client
) -> None:
    form = {"name": "zz-prod", "source": "argocd", "argocd": f"{NAMESPACE}/cluster-prod", "confirm": "1"}

    listed_before = len(hub.requests)
    response = admin_client.post("/clusters/add/", form)
    lists_for_the_page = len(hub.requests) - listed_before
    found = argocd_clusters_sync()

    assert response.status_code == 400
    assert (
        f"The Secret {NAMESPACE}/cluster-prod is registered already, as cluster prod-eu." in response.content.decode()
    )
    assert sorted(found.kept) == ["lab-cluster", "prod-eu"]
    assert Cluster.objects.filter(argocd_secret=f"{NAMESPACE}/cluster-prod").count() == 1
    assert lists_for_the_page == 1  # the form checks the choice among those the page listed


def test_the_hub_role_grants_exactly_the_verbs_the_dashboard_uses(synced: Discovery, hub: FakeKubeAPI) -> None:
    cluster_resync(Cluster.objects.get(name="prod-eu"))
    secrets = f"/api/v1/namespaces/{NAMESPACE}/secrets"

    def verb(path: str, query: dict[str, Any]) -> str:
        if path == secrets:
            return "watch" if query.get("watch") else "list"
        assert path.startswith(secrets + "/"), path
        return "get"

    used = {verb(path, query) for _method, path, query, _headers in hub.requests}
    (role,) = [
        doc for doc in yaml.safe_load_all((ROOT / "deploy/argocd-hub/rbac.yaml").read_text()) if doc["kind"] == "Role"
    ]
    (rule,) = role["rules"]
    assert rule["resources"] == ["secrets"]
    assert set(rule["verbs"]) == used == {"get", "list"}


def test_a_secret_without_the_cluster_label_gives_no_client(
    synced: Discovery, hub: FakeKubeAPI, members: tuple[FakeKubeAPI, FakeKubeAPI]
) -> None:
    prod = members[0]
    cluster = Cluster.objects.get(name="prod-eu")
    hub.serve_secrets(NAMESPACE, {"cluster-prod": secret("prod-eu", prod.url, {"bearerToken": "prod-token"})}, {})
    requests_before = len(prod.requests)

    result = cluster_resync(cluster)

    assert {error.message for error in result.errors.values()} == {
        f"Argo CD cluster Secret {NAMESPACE}/cluster-prod: not labelled {SECRET_TYPE_LABEL}: cluster"
    }
    assert len(prod.requests) == requests_before


def test_a_hub_that_cannot_be_reached_is_named_as_such(synced: Discovery, hub: FakeKubeAPI) -> None:
    cluster = Cluster.objects.get(name="prod-eu")
    hub.stop()

    result = cluster_resync(cluster)

    assert result.errors
    for error in result.errors.values():
        assert isinstance(error, KubeUnavailable)  # retried, not a bad Secret
        assert error.message.startswith(
            f"Argo CD cluster Secret {NAMESPACE}/cluster-prod: the hub: API server unreachable"
        )
