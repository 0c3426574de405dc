"""The cell page's score prose agrees with its own arithmetic (issue 33, item 3).

On a cluster, OME's CRDs give every `modelFormat` and `modelFramework` a `weight` of 1 when
the manifest sets none (ome.io_clusterservingruntimes.yaml: `weight: {default: 1}`); OME's
scorer multiplies (format weight + framework weight) by the entry's priority
(pkg/runtimeselector scorer, spec 4.1). The page is rendered for an entry that sets no weight
and one that sets 3 and 2, with priority 2, and every number the prose states is read back
and recomputed here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from inventory.models import Cluster, Resource
from inventory.services import ClusterSpec, cluster_register, manifests_load
from matrix.services import matrix_rebuild
from tests.support.manifests import llama_model

pytestmark = pytest.mark.django_db


def _runtime(name: str, weights: tuple[int, int] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "modelFormat": {"name": "safetensors", "version": "1.0.0"},
        "modelFramework": {"name": "transformers", "version": "4.51.0"},
        "modelArchitecture": "LlamaForCausalLM",
        "autoSelect": True,
        "priority": 2,
    }
    if weights is not None:
        entry["modelFormat"]["weight"], entry["modelFramework"]["weight"] = weights
    return {"kind": "ClusterServingRuntime", "metadata": {"name": name}, "spec": {"supportedModelFormats": [entry]}}


@pytest.fixture
def cluster(tmp_path: Path, settings: Any) -> Cluster:
    settings.MATRIX_UPDATE_ON_CHANGE = False
    path = tmp_path / "weights.yaml"
    documents = [llama_model("llama"), _runtime("unset", None), _runtime("explicit", (3, 2))]
    path.write_text(yaml.safe_dump_all(documents))
    found = cluster_register(ClusterSpec("weights", Cluster.Source.MANIFESTS, manifests=(str(path),)))
    manifests_load(found, found.manifests, prune=True)
    matrix_rebuild(found)
    return found


@pytest.mark.parametrize(("runtime", "format_weight", "framework_weight"), [("unset", 1, 1), ("explicit", 3, 2)])
def test_the_cell_pages_weights_are_the_ones_its_arithmetic_multiplies(
    client: Client, cluster: Cluster, runtime: str, format_weight: int, framework_weight: int
) -> None:
    model = Resource.objects.get(cluster=cluster, kind="ClusterBaseModel", name="llama")
    found = Resource.objects.get(cluster=cluster, kind="ClusterServingRuntime", name=runtime)
    html = client.get(reverse("matrix:cell", args=[model.pk, found.pk, "_cluster"])).content.decode()

    stated = dict(re.findall(r'data-field="(\w+)" data-weight="(\d+)"', html))
    assert stated == {"format": str(format_weight), "framework": str(framework_weight)}
    arithmetic = re.search(r"Score of this entry: <code>\((\d+) \+ (\d+)\) x (\d+) = (\d+)</code>", html)
    assert arithmetic is not None
    first, second, priority, result = map(int, arithmetic.groups())
    assert (first, second, priority) == (format_weight, framework_weight, 2)
    assert result == (format_weight + framework_weight) * 2
    assert f"<strong>{result}</strong>" in html  # the runtime's score in the prose above
    assert "10 and 5" not in html
    assert "the CRD's default <code>weight: 1</code>" in html
