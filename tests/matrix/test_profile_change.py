"""A change of the OME profile that judges a cluster recomputes its matrix: nothing stays stale."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import override_settings

from inventory.models import Cluster
from inventory.ome_release import ome_version_set_admin
from inventory.services import ClusterSpec, cluster_register, manifests_load
from matrix.models import MatrixRow
from matrix.selectors import current_build
from matrix.services import matrix_catch_up, matrix_is_level, matrix_rebuild
from tests.support.matrix import matrix_cells

pytestmark = pytest.mark.django_db

FILES = """
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata: {name: llama}
spec:
  modelFormat: {name: safetensors, version: "1.0.0"}
  modelParameterSize: 8B
  storage: {storageUri: "hf://meta/llama"}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata: {name: half-open}
spec:
  modelSizeRange: {min: 1B}
  supportedModelFormats:
  - {modelFormat: {name: safetensors, version: "1.0.0"}, autoSelect: true}
"""


def cells(build: object) -> list[tuple[object, ...]]:
    return sorted((c.model.pk, c.runtime.pk, c.namespace, c.status, c.score) for c in matrix_cells(build))  # type: ignore[arg-type]


def test_the_matrix_follows_a_new_profile_like_a_full_rebuild(tmp_path: Path) -> None:
    (tmp_path / "objects.yaml").write_text(FILES)
    cluster = cluster_register(ClusterSpec("files", Cluster.Source.MANIFESTS, manifests=(str(tmp_path),)))
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    build = current_build(cluster)
    assert build is not None
    row = MatrixRow.objects.get(build=build)
    assert row.selected is not None  # the newest OME treats the missing max as open

    with override_settings(MATRIX_UPDATE_ON_CHANGE=False):
        ome_version_set_admin(cluster, "v0.1.5")
    assert not matrix_is_level(cluster)
    assert matrix_catch_up(cluster) is not None

    build.refresh_from_db()
    assert matrix_is_level(cluster)
    assert "17b77eda" in build.ome_behaviour
    row = MatrixRow.objects.get(build=build)
    assert row.selected is None  # 17b77eda crashes on the half-open range
    caught_up = cells(build)
    matrix_rebuild(cluster)
    fresh = current_build(cluster)
    assert fresh is not None
    assert cells(fresh) == caught_up
    assert [status for *_, status, _score in caught_up] == ["excluded"]
