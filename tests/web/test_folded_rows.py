"""The upgrade and what-if pages show a cluster-scoped model's rows that are the same in cluster
scope and every namespace once, "same in every namespace", as `diff` and the fleet do
(`matching.fold_everywhere`); only where the reader reads every namespace."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from pytest_django import Settings

import matching
from inventory.models import Cluster, Resource
from inventory.ome_release import ome_version_set_admin
from inventory.sync import event_apply
from tests.support.access import grant

pytestmark = pytest.mark.django_db

FORMAT = {"name": "safetensors", "version": "1.0.0"}
FRAMEWORK = {"name": "transformers", "version": "4.51.0"}


def entry(architecture: str) -> dict[str, Any]:
    return {"modelFormat": FORMAT, "modelFramework": FRAMEWORK, "modelArchitecture": architecture, "autoSelect": True}


def runtime(name: str, namespace: str | None = None, *, architecture: str = "LlamaForCausalLM", **spec: Any) -> dict:
    metadata = {"name": name} if namespace is None else {"name": name, "namespace": namespace}
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime" if namespace is None else "ServingRuntime",
        "metadata": metadata,
        "spec": {"supportedModelFormats": [entry(architecture)], **spec},
    }


LLAMA = {
    "apiVersion": "ome.io/v1beta1",
    "kind": "ClusterBaseModel",
    "metadata": {"name": "llama-8b"},
    "spec": {
        "modelFormat": FORMAT,
        "modelFramework": FRAMEWORK,
        "modelArchitecture": "LlamaForCausalLM",
        "modelParameterSize": "8B",
        "storage": {"storageUri": "hf://org/llama"},
    },
}
# Older OME crashes on a size range with one bound (U1): the model gets `rt` only after an upgrade.
HALF_OPEN = runtime("rt", modelSizeRange={"min": "1B"})
# Namespaces team-a and team-b, with runtimes that do not serve the model.
OTHERS = (
    runtime("other-a", "team-a", architecture="MistralForCausalLM"),
    runtime("other-b", "team-b", architecture="MistralForCausalLM"),
)


def cluster_of(*objects: dict[str, Any], ome: str = "17b77eda") -> Cluster:
    """A cluster judged by OME `ome`, holding `objects`."""
    cluster = Cluster.objects.create(name="folded", source=Cluster.Source.MANIFESTS)
    for obj in objects:
        event_apply(cluster, "ADDED", obj)
    ome_version_set_admin(cluster, ome)
    return cluster


def reader_of_team_a(client: Client, settings: Settings) -> None:
    settings.API_ANONYMOUS_READ = False  # else every reader reads everything
    reader = User.objects.create_user("reads-team-a")
    grant(reader, "viewer", cluster="folded", namespace="team-a")
    client.force_login(reader)


def pick_rows(client: Client) -> list[str]:
    """The row headers of the picks table of the upgrade page."""
    html = client.get("/matrix/upgrade/", {"cluster": "folded"}).content.decode()
    section = re.search(r'<section aria-labelledby="head-selection">.*?</section>', html, re.DOTALL)
    assert section is not None
    rows = re.findall(r'<th scope="row">([^<]*)</th>\s*<td>pick</td>', section[0])
    heading = re.search(r"Runtime picks \(per model and namespace\) \((\d+)\)", section[0])
    assert heading is not None
    return [*rows, f"count {heading[1]}"]


def test_a_pick_that_changes_alike_in_every_namespace_is_one_row(client: Client) -> None:
    cluster_of(LLAMA, HALF_OPEN, *OTHERS)

    rows = pick_rows(client)

    # Cluster scope, team-a and team-b: three rows before, one now; the count still counts three
    # pick differences and three error differences (each namespace's error names its own runtimes).
    assert [row for row in rows if "llama-8b" in row] == ["ClusterBaseModel llama-8b (same in every namespace: 3 rows)"]
    assert rows[-1] == "count 6"


def test_a_reader_of_some_namespaces_is_not_told_every_namespace(client: Client, settings: Settings) -> None:
    cluster_of(LLAMA, HALF_OPEN, *OTHERS)
    reader_of_team_a(client, settings)

    rows = pick_rows(client)

    # Alike where they read, but team-b's row is not theirs to see: no claim about every namespace.
    assert [row for row in rows if "llama-8b" in row] == [
        "ClusterBaseModel llama-8b in (cluster scope)",
        "ClusterBaseModel llama-8b in team-a",
    ]


def whatif_namespaces(client: Client, cluster: Cluster) -> list[str]:
    """The Namespaces cell of each line of the what-if of `rt` made to serve Mistral only."""
    rt = Resource.objects.get(cluster=cluster, name="rt")
    edited = runtime("rt", architecture="MistralForCausalLM")
    response = client.post(reverse("whatif:runtime-whatif", args=[rt.pk]), {"manifest": yaml.safe_dump(edited)})
    assert response.status_code == 200, response.content.decode()[-2000:]
    table = re.search(r'<table class="plain whatif-rows">.*?</table>', response.content.decode(), re.DOTALL)
    assert table is not None
    return re.findall(r"<tr><td>.*?</td>\s*<td>([^<]*)</td>", table[0], re.DOTALL)


def test_a_whatif_change_alike_in_every_namespace_is_one_line_saying_so(client: Client) -> None:
    cluster = cluster_of(LLAMA, runtime("rt"), *OTHERS, ome=matching.NEWEST_BEHAVIOUR)

    # Cluster scope, team-a and team-b lose rt alike (before: one line naming the three).
    assert whatif_namespaces(client, cluster) == ["same in every namespace (3 rows)"]


def test_a_whatif_reader_of_some_namespaces_sees_them_named(client: Client, settings: Settings) -> None:
    cluster = cluster_of(LLAMA, runtime("rt"), *OTHERS, ome=matching.NEWEST_BEHAVIOUR)
    reader_of_team_a(client, settings)

    assert whatif_namespaces(client, cluster) == ["cluster scope, team-a"]
