"""The fleet with clusters judged by different OME profiles: each cluster's picks come from its
own profile's matrix, and the disagreement is explained by the profile."""

from __future__ import annotations

import pytest
from pytest_django import Settings

from access.scope import SYSTEM
from fleet.services import fleet_get
from inventory.models import Cluster, Kind
from inventory.sync import snapshot_apply
from matrix.services import matrix_rebuild
from tests.whatif.test_check_behaviour import HALF_OPEN, cluster

LLAMA = ("ClusterBaseModel", "", "llama")


@pytest.fixture(autouse=True)
def _no_matrix_tasks(settings: Settings) -> None:
    settings.MATRIX_UPDATE_ON_CHANGE = False


def with_half_open(found: Cluster) -> Cluster:
    runtimes = {("ClusterServingRuntime", "", "half"): HALF_OPEN}
    snapshot_apply(found, Kind.CLUSTER_SERVING_RUNTIME, runtimes, prune=False)
    matrix_rebuild(found)
    return found


@pytest.mark.django_db
def test_each_clusters_pick_comes_from_its_own_profile_and_the_profile_explains_it() -> None:
    with_half_open(cluster("legacy", "17b77eda"))
    with_half_open(cluster("newer"))

    fleet = fleet_get(scope=SYSTEM)
    row = next(row for row in fleet.rows if row.model == LLAMA and row.namespace == "")

    assert row.cells["legacy"][0] is None
    assert row.cells["newer"][0] is not None
    reasons = fleet.reasons(row)
    assert reasons == [
        "OME behaviour differs (legacy: OME profile 17b77eda (17b77eda); newer: OME profile v1.3 (a543351b))"
    ]
