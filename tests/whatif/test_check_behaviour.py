"""The what-if check judges each cluster by its own OME profile, as its matrix does, and names
that profile per cluster: in the command's report and in the API's sections."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from rest_framework.test import APIClient

import matching
from inventory.models import Cluster, Kind
from inventory.sync import snapshot_apply
from tests.matching.test_diff import model, runtime, tree
from tests.whatif.test_check import whatif

SIZED = model(modelParameterSize="8B")
# Newer OME reads the missing bound as open and picks this runtime; OME 17b77eda crashes on it.
HALF_OPEN = runtime("half", priority=5, modelSizeRange={"min": "1B"})


def cluster(name: str, ome_version: str = "") -> Cluster:
    """A manifest cluster holding the sized model and runtime vllm, stored as the API server
    holds them (CRD defaults applied)."""
    found = Cluster.objects.create(name=name, source=Cluster.Source.MANIFESTS, ome_version_admin=ome_version)
    snapshot_apply(
        found, Kind.CLUSTER_BASE_MODEL, {("ClusterBaseModel", "", "llama"): matching.as_applied(SIZED)}, prune=True
    )
    vllm = matching.as_applied(runtime("vllm"))
    snapshot_apply(found, Kind.CLUSTER_SERVING_RUNTIME, {("ClusterServingRuntime", "", "vllm"): vllm}, prune=True)
    return found


@pytest.fixture
def clusters(db: None) -> None:
    cluster("legacy", "17b77eda")
    cluster("newer")


@pytest.mark.usefixtures("clusters")
def test_each_cluster_is_judged_by_its_own_profile(tmp_path: Path) -> None:
    code, out, err = whatif("--all-clusters", tree(tmp_path / "pr", HALF_OPEN), "--fail-on", "lost-runtime")

    assert code == 1, err
    old, new = out.split("== cluster newer\n")
    assert old.startswith("== cluster legacy\nJudged as OME 17b77eda.\n")
    assert "Models that lose their runtime (1):" in old
    assert new.startswith("Judged as OME v1.3.\n")
    assert "Models that lose their runtime" not in new
    assert "FAILED: lost-runtime (1)" in out


@pytest.mark.usefixtures("clusters")
def test_the_api_names_each_clusters_profile_and_why() -> None:
    body = {"all_clusters": True, "manifests": yaml.safe_dump(HALF_OPEN), "fail_on": "lost-runtime,pick-changed"}

    response = APIClient().post("/api/v1/whatif/check/", body, format="json")

    assert response.status_code == 200, response.content
    data = response.json()
    old, new = data["sections"]
    assert (old["title"], old["behaviour"], old["ome"]["name"]) == ("cluster legacy", "17b77eda", "17b77eda")
    assert old["ome"]["source"] == "registration"
    assert "OME 17b77eda crashes" in old["rows"][0]["error"]
    assert (new["title"], new["behaviour"], new["ome"]["name"]) == ("cluster newer", "v1.3", "v1.3")
    (row,) = new["rows"]
    assert (row["old_pick"]["name"], row["new_pick"]["name"], row["error"]) == ("vllm", "half", None)
    assert data["found"] == {"lost-runtime": 1, "pick-changed": 1}
