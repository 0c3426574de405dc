"""Cluster-supplied strings are shown as text on every page: a manifest whose names and values
are HTML (`<img src=x onerror=alert(1)>`) never reaches a page unescaped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from inventory.models import Cluster, Resource
from inventory.services import ClusterSpec, cluster_register, manifests_load
from matrix.services import matrix_rebuild
from tests.web.conftest import HOSTILE

pytestmark = pytest.mark.django_db
ESCAPED = "&lt;img src=x onerror=alert(1)&gt;"
SCRIPT = "<script>alert(2)</script>"


def hostile_manifests() -> list[dict[str, Any]]:
    model = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterBaseModel",
        "metadata": {"name": HOSTILE, "labels": {"x": SCRIPT}},
        "spec": {
            "modelFormat": {"name": "diffusers", "version": "0.34.0"},
            "modelFramework": {"name": "diffusers", "version": "0.34.0"},
            "modelArchitecture": HOSTILE,
            "storage": {"storageUri": f"pvc://{HOSTILE}"},
        },
    }
    runtime = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": HOSTILE},
        "spec": {
            "supportedModelFormats": [
                {
                    "modelFormat": {"name": "diffusers", "version": "0.34.0"},
                    "modelFramework": {"name": "diffusers", "version": "0.34.0"},
                    "modelArchitecture": HOSTILE,
                    "diffusionPipeline": {"className": HOSTILE, "transformer": {"library": SCRIPT}},
                    "autoSelect": True,
                }
            ]
        },
    }
    plain_runtime = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "plain"},
        "spec": {
            "supportedModelFormats": [
                {
                    "modelFormat": {"name": "diffusers", "version": "0.34.0"},
                    "modelFramework": {"name": "diffusers", "version": "0.34.0"},
                    "modelArchitecture": HOSTILE,
                    "autoSelect": True,
                }
            ]
        },
    }
    isvc = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "svc", "namespace": "team"},
        "spec": {"model": {"name": HOSTILE}, "runtime": {"name": HOSTILE}},
    }
    return [model, runtime, plain_runtime, isvc]


@pytest.fixture
def hostile(tmp_path: Path, settings: Any) -> Iterator[Cluster]:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump_all(hostile_manifests()))
    cluster = cluster_register(ClusterSpec("hostile", Cluster.Source.MANIFESTS, manifests=(str(path),)))
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    return cluster


def assert_shown_as_text(html: str) -> None:
    assert HOSTILE not in html
    assert SCRIPT not in html
    assert ESCAPED in html


def test_every_page_shows_hostile_names_and_values_as_text(client: Client, hostile: Cluster) -> None:
    model = Resource.objects.get(cluster=hostile, kind="ClusterBaseModel")
    runtime = Resource.objects.get(cluster=hostile, kind="ClusterServingRuntime", name=HOSTILE)
    cell = reverse("matrix:cell", args=[model.pk, runtime.pk, "_cluster"])
    pages = [
        f"{reverse('matrix:matrix')}?cluster=hostile",
        f"{reverse('matrix:matrix')}?cluster=hostile&cols=all&status=excluded&status=selected",
        f"{reverse('matrix:matrix')}?cluster=hostile&namespace=team",
        cell,
        cell + "reason/",
        reverse("matrix:model", args=[model.pk]),
        reverse("whatif:near-misses", args=[model.pk]),
        reverse("matrix:runtime", args=[runtime.pk]),
        f"{reverse('patches:patch', args=[model.pk])}?runtime={runtime.pk}",
        f"{reverse('matrix:isvcs')}?cluster=hostile",
        f"{reverse('lint:lint')}?cluster=hostile",
    ]

    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert_shown_as_text(response.content.decode())


def test_a_pasted_manifest_and_model_index_are_echoed_as_text(client: Client, hostile: Cluster) -> None:
    model = Resource.objects.get(cluster=hostile, kind="ClusterBaseModel")
    runtime = Resource.objects.get(cluster=hostile, kind="ClusterServingRuntime", name=HOSTILE)

    whatif = client.post(reverse("whatif:runtime-whatif", args=[runtime.pk]), {"manifest": f"kind: {HOSTILE}"})
    index = client.post(
        reverse("patches:model-index", args=[model.pk]),
        {"text": json.dumps({"_class_name": HOSTILE, "transformer": ["diffusers", SCRIPT]})},
    )
    broken_index = client.post(reverse("patches:model-index", args=[model.pk]), {"text": HOSTILE})

    for response in (whatif, index, broken_index):
        assert_shown_as_text(response.content.decode())


def test_the_sync_page_shows_hostile_errors_as_text(client: Client, hostile: Cluster) -> None:
    hostile.sync_states.update(last_error=f"list failed: {HOSTILE}")

    assert_shown_as_text(client.get(reverse("sync")).content.decode())
