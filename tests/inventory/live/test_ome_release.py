"""Each cluster's OME: from its controller Deployment's image tag, else from its CRDs' schemas,
or set by an administrator (who wins); the profile that judges the cluster follows."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

import matching
from inventory import kube
from inventory.live.resync import cluster_resync
from inventory.models import Cluster
from inventory.ome_release import judge, ome_release_refresh, ome_version_set_admin, profile_for
from inventory.parsed import inventory_fingerprint, load_inventory
from inventory.services import ClusterSpec, cluster_register, parse_cluster_setting
from tests.fakes.kube_api import FakeKubeAPI

pytestmark = pytest.mark.django_db

CRD_17B77EDA = yaml.safe_load(
    (Path(__file__).parents[2] / "fakes" / "crds" / "ome.io_clusterbasemodels.yaml").read_text()
)
IMAGE = "ghcr.io/moirai-internal/ome-manager:{tag}"


def newer_crd() -> dict[str, Any]:
    crd = copy.deepcopy(CRD_17B77EDA)
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    spec["distribution"] = {"type": "string", "enum": ["PerNode", "Sharded"]}
    return crd


def refresh(cluster: Cluster) -> Any:
    api = kube.client_for(cluster)
    try:
        return ome_release_refresh(cluster, api)
    finally:
        kube.close(api)


@pytest.mark.parametrize(
    ("tag", "profile"),
    [
        ("v0.1.3", "17b77eda"),
        ("v0.1.5", "17b77eda"),
        # ome-docs getting-started/install.md: v1.2.2 is "the latest release", without the
        # features marked "since v1.3" (docs/inferenceservices.md, OME versions).
        ("v0.1.6", "17b77eda"),
        ("v1.2.2", "17b77eda"),
        ("v1.3.0", matching.NEWEST_BEHAVIOUR),
        ("v1.3.2", "v1.3"),
    ],
)
def test_the_controller_image_tag_decides_the_profile(
    fake: FakeKubeAPI, cluster: Cluster, tag: str, profile: str
) -> None:
    fake.serve_deployment("ome", "ome-controller-manager", IMAGE.format(tag=tag))

    judgement = refresh(cluster)

    assert (judgement.behaviour.name, judgement.source, judgement.version) == (profile, "image", tag)
    assert f"image {IMAGE.format(tag=tag)} of Deployment ome/ome-controller-manager" in judgement.why
    assert Cluster.objects.get(pk=cluster.pk).ome_version == tag


def test_a_digest_and_a_registry_port_do_not_hide_the_tag(fake: FakeKubeAPI, cluster: Cluster) -> None:
    fake.serve_deployment("ome", "ome-controller-manager", "registry.local:5000/ome/ome-manager:v0.1.5@sha256:abc")

    assert refresh(cluster).behaviour.name == "17b77eda"


def test_a_full_resync_detects_the_version_and_the_inventory_follows(fake: FakeKubeAPI, cluster: Cluster) -> None:
    fake.serve_deployment("ome", "ome-controller-manager", IMAGE.format(tag="v0.1.5"))
    before = inventory_fingerprint(cluster)

    cluster_resync(cluster)

    assert load_inventory(cluster).behaviour.name == "17b77eda"
    assert inventory_fingerprint(cluster) != before
    assert inventory_fingerprint(cluster).endswith(":17b77eda")


def test_without_deployment_access_the_crd_schema_tells_newer_ome(fake: FakeKubeAPI, cluster: Cluster) -> None:
    fake.serve_deployment("ome", "ome-controller-manager", None, status=403)
    fake.serve_crd(newer_crd())

    judgement = refresh(cluster)

    assert (judgement.behaviour.name, judgement.source) == (matching.NEWEST_BEHAVIOUR, "crd")
    assert "CRD clusterbasemodels.ome.io has spec.distribution, which OME added after 17b77eda" in judgement.why
    assert "before that: Deployment ome/ome-controller-manager: permission denied on deployments (403)" in judgement.why


def test_the_17b77eda_crd_tells_17b77eda(fake: FakeKubeAPI, cluster: Cluster) -> None:
    fake.serve_crd(CRD_17B77EDA)  # the Deployment is not served: 404

    judgement = refresh(cluster)

    assert (judgement.behaviour.name, judgement.source) == ("17b77eda", "crd")


def test_an_image_without_a_release_tag_falls_back_to_the_crds(fake: FakeKubeAPI, cluster: Cluster) -> None:
    fake.serve_deployment("ome", "ome-controller-manager", "ghcr.io/moirai-internal/ome-manager:latest")
    fake.serve_crd(CRD_17B77EDA)

    judgement = refresh(cluster)

    assert (judgement.behaviour.name, judgement.source) == ("17b77eda", "crd")
    assert "runs ghcr.io/moirai-internal/ome-manager:latest, which has no release tag" in judgement.why


def test_nothing_readable_is_said_and_judged_by_the_newest(fake: FakeKubeAPI, cluster: Cluster) -> None:
    fake.serve_deployment("ome", "ome-controller-manager", None, status=403)
    fake.serve_crd(None, name="clusterbasemodels.ome.io", status=403)

    judgement = refresh(cluster)

    assert (judgement.behaviour.name, judgement.source, judgement.version) == (matching.NEWEST_BEHAVIOUR, "unknown", "")
    assert judgement.why.startswith(
        "OME version not detected (Deployment ome/ome-controller-manager: permission denied"
    )
    assert "CRD clusterbasemodels.ome.io: permission denied on customresourcedefinitions (403)" in judgement.why


def test_the_administrator_wins_over_detection(fake: FakeKubeAPI, cluster: Cluster) -> None:
    fake.serve_deployment("ome", "ome-controller-manager", IMAGE.format(tag="v1.3.1"))
    refresh(cluster)

    judgement = ome_version_set_admin(cluster, "v0.1.4")
    assert (judgement.behaviour.name, judgement.source) == ("17b77eda", "admin")
    assert judgement.why == "OME v0.1.4 set by an administrator: profile 17b77eda"
    assert refresh(cluster).behaviour.name == "17b77eda"  # detection does not override it
    assert ome_version_set_admin(cluster, "").behaviour.name == matching.NEWEST_BEHAVIOUR


def test_release_names_and_proposals_resolve_but_a_proposal_is_never_detected() -> None:
    assert profile_for("v1.2.2").name == "17b77eda"
    assert profile_for("v1.3").name == "v1.3"
    assert profile_for("pr603").proposal  # an administrator may name one
    assert not any(profile_for(tag).proposal for tag in ("v0.1.0", "v1.2.2", "v1.3.0", "v9.0.0"))


def test_a_version_that_is_no_release_and_no_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="'latest' is neither a behaviour profile"):
        profile_for("latest")


def test_the_management_command_shows_sets_and_detects(fake: FakeKubeAPI, cluster: Cluster, capsys: Any) -> None:
    fake.serve_deployment("ome", "ome-controller-manager", IMAGE.format(tag="v0.1.5"))

    call_command("ome_version", cluster.name, "--detect")
    assert (
        "profile 17b77eda (OME v0.1.5 detected from the OME controller Deployment's image tag"
        in capsys.readouterr().out
    )
    call_command("ome_version", cluster.name, "--set", matching.NEWEST_BEHAVIOUR)
    assert f"profile {matching.NEWEST_BEHAVIOUR}" in capsys.readouterr().out
    with pytest.raises(CommandError, match=r"--set: 'v\.x' is neither"):
        call_command("ome_version", cluster.name, "--set", "v.x")


def test_registration_takes_a_version_and_manifests_default_to_the_newest(tmp_path: Path) -> None:
    (spec,) = parse_cluster_setting(f"old@v0.1.5=manifests:{tmp_path}")
    assert (spec.name, spec.ome_version) == ("old", "v0.1.5")

    old = cluster_register(spec)
    plain = cluster_register(ClusterSpec("plain", Cluster.Source.MANIFESTS, manifests=(str(tmp_path),)))

    assert (judge(old).behaviour.name, judge(old).source) == ("17b77eda", "registration")
    assert judge(plain).behaviour.name == matching.NEWEST_BEHAVIOUR
    assert "registered without an OME version" in judge(plain).why
    with pytest.raises(ValueError, match="'nope' is neither"):
        cluster_register(ClusterSpec("bad", Cluster.Source.MANIFESTS, manifests=(str(tmp_path),), ome_version="nope"))
