"""Patch rights: the patcher role per namespace (a ClusterBaseModel needs it on the cluster),
nothing but spec.diffusionPipeline, and on a delegating cluster the cluster's own RBAC, asked
with a SubjectAccessReview and applied by impersonating the user."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pytest_django import Settings

from access.models import Delegation, Identity
from inventory.models import Cluster, Resource
from patches.lookup import version_of
from patches.models import PatchAttempt
from patches.services import patch_apply
from tests.fakes.kube_api import FakeKubeAPI
from tests.patches.seed import MODEL, PIPELINE, SEED_PATCH

from .conftest import signed_in, user_with

pytestmark = pytest.mark.django_db
TEAM = "BaseModel/team-a/qwen-image-team"
TEAM_PATCH = {"spec": {"diffusionPipeline": PIPELINE}}


def apply(cluster: Cluster, user: Any, model: str = MODEL, patch: Any = SEED_PATCH) -> Any:
    name = model.rsplit("/", 1)[-1]
    version = version_of(cluster, Resource.objects.get(cluster=cluster, name=name))
    return patch_apply(cluster, model=model, patch=patch, resource_version=version, user=user)


def patches_sent(api: FakeKubeAPI) -> list[Any]:
    return [request for request in api.requests if request.method == "PATCH"]


@pytest.fixture
def cluster_patcher(django_user_model: Any) -> Any:
    return user_with(django_user_model, "cluster-patcher", "patcher", cluster="live")


@pytest.fixture
def post_patch(live: Cluster) -> Callable[..., Any]:
    """`POST /api/v1/patches/apply/` signed in as `user`: `patch` on the model `name` of cluster
    live, at its stored resource version unless `resource_version` is given."""

    def post(user: Any, patch: Any, name: str = "qwen-image-pvc", resource_version: str | None = None) -> Any:
        model = Resource.objects.get(cluster=live, name=name)
        body = {
            "cluster": "live",
            "model": model.pk,
            "patch": patch,
            "resource_version": resource_version or model.resource_version,
        }
        return signed_in(user).post("/api/v1/patches/apply/", body, "application/json")

    return post


def test_a_namespace_patcher_patches_its_namespace_but_not_a_cluster_scoped_model(
    live: Cluster, fake: FakeKubeAPI, django_user_model: Any
) -> None:
    user = user_with(django_user_model, "ns-patcher", "patcher", cluster="live", namespace="team-a")

    own = apply(live, user, TEAM, TEAM_PATCH)
    cluster_scoped = apply(live, user)

    assert own.result == "applied"
    assert (cluster_scoped.result, cluster_scoped.http_status) == ("denied", 403)
    assert "needs the patcher role on cluster live" in cluster_scoped.attempt.detail
    assert [request.name for request in patches_sent(fake)] == ["qwen-image-team"]


def test_another_namespace_or_another_cluster_is_not_found(
    live: Cluster, snapshot: Cluster, fake: FakeKubeAPI, django_user_model: Any
) -> None:
    other_team = user_with(django_user_model, "team-b-patcher", "patcher", cluster="live", namespace="team-b")
    other_cluster = user_with(django_user_model, "seed-patcher", "patcher", cluster="seed")

    team = apply(live, other_team, TEAM, TEAM_PATCH)
    cluster = apply(live, other_cluster)

    assert (team.result, cluster.result) == ("not_found", "not_found")
    assert patches_sent(fake) == []


def test_a_viewer_is_denied_and_nothing_is_sent(live: Cluster, fake: FakeKubeAPI, django_user_model: Any) -> None:
    viewer = user_with(django_user_model, "viewer", "viewer", cluster="live")

    outcome = apply(live, viewer)

    assert (outcome.result, outcome.http_status) == ("denied", 403)
    assert patches_sent(fake) == []


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"spec": {"modelFormat": {"name": "onnx"}}}, "patch.spec.modelFormat"),
        ({"spec": {"diffusionPipeline": PIPELINE, "storage": {"storageUri": "hf://x/y"}}}, "patch.spec.storage"),
        ({"metadata": {"labels": {"owner": "eve"}}}, "patch.metadata"),
        (
            {"spec": {"diffusionPipeline": {"className": "X", "command": ["sh"]}}},
            "patch.spec.diffusionPipeline.command",
        ),
    ],
)
def test_a_field_other_than_the_pipeline_is_rejected_before_anything_is_sent(
    live: Cluster, fake: FakeKubeAPI, cluster_patcher: Any, patch: Any, field: str
) -> None:
    outcome = apply(live, cluster_patcher, patch=patch)

    assert (outcome.result, outcome.field) == ("rejected", field)
    assert patches_sent(fake) == []


@pytest.mark.parametrize(
    ("pipeline", "field", "message"),
    [
        (
            {"className": "X" * 2_000_000},
            "patch.spec.diffusionPipeline.className",
            "2000000 characters long; at most 253",
        ),
        ({"vae": {"library": "d" * 300, "type": "A"}}, "patch.spec.diffusionPipeline.vae.library", "at most 253"),
        (
            {"additionalComponents": {"c" * 254: {"library": "d", "type": "A"}}},
            "patch.spec.diffusionPipeline.additionalComponents (a component's name)",
            "254 characters long",
        ),
        (
            {"additionalComponents": {f"c{i}": None for i in range(65)}},
            "patch.spec.diffusionPipeline.additionalComponents",
            "65 entries; at most 64",
        ),
    ],
    ids=["2MB-className", "long-library", "long-component-name", "too-many-components"],
)
def test_an_oversized_pipeline_value_is_refused_naming_the_field_and_the_limit(
    fake: FakeKubeAPI,
    cluster_patcher: Any,
    post_patch: Callable[..., Any],
    pipeline: Any,
    field: str,
    message: str,
) -> None:
    response = post_patch(cluster_patcher, {"spec": {"diffusionPipeline": pipeline}})

    assert response.status_code == 400, response.content[:500]
    assert response.json()["field"] == field
    assert message in response.json()["detail"]
    assert patches_sent(fake) == []


def test_the_api_refuses_another_namespaces_model_as_missing(
    django_user_model: Any, post_patch: Callable[..., Any]
) -> None:
    user = user_with(django_user_model, "team-b-patcher", "patcher", cluster="live", namespace="team-b")

    response = post_patch(user, TEAM_PATCH, name="qwen-image-team")

    assert response.status_code == 404
    assert "qwen-image-team" not in response.json()["detail"]


# ---- delegation to the cluster's RBAC ---------------------------------------------------------


@pytest.fixture
def delegating(live: Cluster) -> Cluster:
    Delegation.objects.create(cluster=live.name)
    return live


def reviews(api: FakeKubeAPI) -> list[dict[str, Any]]:
    return [request.body["spec"] for request in api.requests if request.verb == "review"]


def impersonation(request: Any) -> tuple[str | None, list[str]]:
    groups = [value for name, value in request.header_items if name.lower() == "impersonate-group"]
    return request.headers.get("impersonate-user"), groups


def test_a_user_the_cluster_allows_patches_as_themselves(
    delegating: Cluster, fake: FakeKubeAPI, django_user_model: Any, settings: Settings
) -> None:
    settings.OME_KUBE_USER_PREFIX = settings.OME_KUBE_GROUP_PREFIX = "oidc:"
    user = user_with(django_user_model, "alice", "viewer", cluster="live")
    Identity.objects.create(user=user, subject="s-1", name="alice@corp.example", groups=["ml-platform", "staff"])
    fake.allow(groups=["oidc:ml-platform"], kinds=["clusterbasemodels"])

    outcome = apply(delegating, user)

    assert outcome.result == "applied", outcome.attempt.detail
    [review] = reviews(fake)
    assert (review["user"], review["groups"]) == ("oidc:alice@corp.example", ["oidc:ml-platform", "oidc:staff"])
    assert review["resourceAttributes"] == {
        "group": "ome.io",
        "version": "v1beta1",
        "resource": "clusterbasemodels",
        "verb": "patch",
        "name": "qwen-image-pvc",
    }
    [sent] = patches_sent(fake)
    assert impersonation(sent) == ("oidc:alice@corp.example", ["oidc:ml-platform", "oidc:staff"])
    attempt = PatchAttempt.objects.get()
    assert (attempt.identity, attempt.groups) == ("oidc:alice@corp.example", ["oidc:ml-platform", "oidc:staff"])


def test_a_user_the_cluster_denies_is_denied_without_a_patch(
    delegating: Cluster, fake: FakeKubeAPI, django_user_model: Any
) -> None:
    user = user_with(django_user_model, "mallory", "viewer", cluster="live")
    fake.allow(users=["someone-else"])

    outcome = apply(delegating, user)

    assert (outcome.result, outcome.http_status) == ("denied", 403)
    assert "the cluster's RBAC does not let ome-compat:mallory" in outcome.attempt.detail
    assert [review["user"] for review in reviews(fake)] == ["ome-compat:mallory"]
    assert patches_sent(fake) == []


def test_dashboard_rights_without_cluster_rights_are_denied_by_the_cluster(
    delegating: Cluster, fake: FakeKubeAPI, django_user_model: Any
) -> None:
    user = user_with(django_user_model, "dash-admin", "admin", cluster="live")
    fake.allow(users=["ome-compat:dash-admin"], namespaces=["team-a"])  # rights elsewhere only

    outcome = apply(delegating, user)

    assert outcome.result == "denied"
    assert patches_sent(fake) == []


def test_an_oidc_system_name_and_group_reach_the_cluster_prefixed_and_are_not_trusted(
    delegating: Cluster, fake: FakeKubeAPI, django_user_model: Any
) -> None:
    user = user_with(django_user_model, "sysadmin", "viewer", cluster="live")
    Identity.objects.create(user=user, subject="s-2", name="system:admin", groups=["system:masters"])
    fake.allow(users=["system:admin"])
    fake.allow(groups=["system:masters"])

    outcome = apply(delegating, user)

    assert (outcome.result, outcome.http_status) == ("denied", 403)
    [review] = reviews(fake)
    assert (review["user"], review["groups"]) == ("oidc:system:admin", ["oidc:system:masters"])
    assert patches_sent(fake) == []


def test_a_local_account_and_an_oidc_user_of_the_same_name_are_different_people_to_the_cluster(
    delegating: Cluster, fake: FakeKubeAPI, django_user_model: Any
) -> None:
    local = user_with(django_user_model, "ada", "viewer", cluster="live")
    oidc = user_with(django_user_model, "ada.1234", "viewer", cluster="live")
    Identity.objects.create(user=oidc, subject="s-3", name="ada")
    fake.allow(users=["oidc:ada"], kinds=["clusterbasemodels"])

    as_local = apply(delegating, local)
    as_oidc = apply(delegating, oidc)

    assert (as_local.result, as_oidc.result) == ("denied", "applied")
    assert [review["user"] for review in reviews(fake)] == ["ome-compat:ada", "oidc:ada"]


@pytest.mark.parametrize(
    ("name", "groups", "problem"),
    [
        ("chén-陳", [], "your user name 'oidc:ch\\xe9n-\\u9673' cannot be sent in an HTTP header: it holds '\\xe9'"),
        ("eve\r\nImpersonate-Group: system:masters", [], "it holds '\\r' (U+000D)"),
        ("eve", ["ok", "ops\nroot"], "your group 'oidc:ops\\nroot' cannot be sent in an HTTP header"),
    ],
    ids=["non-latin-1", "cr-lf", "group-with-lf"],
)
def test_a_name_a_header_cannot_carry_is_a_clear_refusal_and_nothing_is_sent(
    delegating: Cluster,
    fake: FakeKubeAPI,
    django_user_model: Any,
    post_patch: Callable[..., Any],
    name: str,
    groups: list[str],
    problem: str,
) -> None:
    user = user_with(django_user_model, "odd", "viewer", cluster="live")
    Identity.objects.create(user=user, subject="s-4", name=name, groups=groups)

    response = post_patch(user, SEED_PATCH)

    assert response.status_code == 403, response.content
    assert problem in response.json()["detail"]
    assert reviews(fake) == []
    assert patches_sent(fake) == []


def test_the_cluster_refuses_an_impersonated_patch_its_rbac_does_not_allow(live: Cluster, fake: FakeKubeAPI) -> None:
    # Without the SubjectAccessReview (a cluster that changed its RBAC in between): the cluster
    # itself refuses the impersonated request.
    from inventory import kube

    api = kube.client_for(live, impersonate=("mallory", ("staff",)))
    with pytest.raises(kube.KubeUnauthorized):
        kube.patch_object(api, "ClusterBaseModel", "", "qwen-image-pvc", SEED_PATCH)
    kube.close(api)
    assert "diffusionPipeline" not in fake.get("clusterbasemodels", "qwen-image-pvc")["spec"]


def test_the_objects_a_patch_answers_with_are_redacted(
    fake: FakeKubeAPI, cluster_patcher: Any, post_patch: Callable[..., Any]
) -> None:
    """A conflict answers the cluster's current object and an applied patch the patched one:
    both come from the cluster, so both are redacted as stored objects are."""
    fake.patch("ClusterBaseModel", "qwen-image-pvc", {"metadata": {"annotations": {"example.com/token": "PLANTED"}}})

    conflict = post_patch(cluster_patcher, SEED_PATCH)
    applied = post_patch(cluster_patcher, SEED_PATCH, resource_version=conflict.json()["current"]["resource_version"])

    assert (conflict.status_code, applied.status_code) == (409, 200), applied.content[:500]
    assert conflict.json()["current"]["object"]["metadata"]["annotations"]["example.com/token"] == "[redacted]"
    assert applied.json()["object"]["metadata"]["annotations"]["example.com/token"] == "[redacted]"
    assert b"PLANTED" not in conflict.content + applied.content


@pytest.mark.parametrize(
    "pipeline",
    [
        {"transformer": "X" * 2_000_000},
        {"className": ["X" * 2_000_000]},
        {"additionalComponents": {"c": "X" * 2_000_000}},
    ],
    ids=["string-component", "list-className", "string-additional-component"],
)
def test_an_oversized_value_of_the_wrong_type_is_refused_and_not_echoed(
    fake: FakeKubeAPI, cluster_patcher: Any, post_patch: Callable[..., Any], pipeline: Any, settings: Settings
) -> None:
    response = post_patch(cluster_patcher, {"spec": {"diffusionPipeline": pipeline}})

    assert response.status_code == 400, response.content[:500]
    assert response.json()["field"].startswith("patch.spec.diffusionPipeline")
    assert "at most 253 are allowed" in response.json()["detail"]
    assert len(PatchAttempt.objects.get().detail) < 1_000
    assert len(response.content) < 2 * settings.OME_AUDIT_PATCH_MAX_BYTES  # the audit's truncated patch
    assert patches_sent(fake) == []


@pytest.mark.parametrize(
    "patch",
    [
        {"X" * 2_000_000: 1},
        {"spec": {"X" * 2_000_000: 1}},
        {"spec": {"diffusionPipeline": {"vae": {"X" * 2_000_000: 1}}}},
    ],
    ids=["top-level-key", "spec-key", "component-key"],
)
def test_a_refusal_quoting_a_huge_field_name_is_kept_short(
    fake: FakeKubeAPI, cluster_patcher: Any, post_patch: Callable[..., Any], patch: Any
) -> None:
    response = post_patch(cluster_patcher, patch)

    assert response.status_code == 400, response.content[:500]
    assert len(PatchAttempt.objects.get().detail) <= 1_000
    assert len(response.json()["detail"]) <= 1_000
    assert patches_sent(fake) == []
