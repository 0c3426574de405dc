"""POST /api/v1/policies/check/ against the audit's inputs (issue 32): each refused fast with a
clear error, never holding a web worker; and the caller's role on the cluster is checked before
the policies are parsed."""

from __future__ import annotations

import time
from typing import Any

import pytest
from rest_framework.test import APIClient

from inventory.models import Cluster
from tests.matching.test_bounded_reader import manifest_bomb, many_policies, policy_bomb

SEED_MODEL = "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: m}\nspec: {}\n"


def check(client: APIClient, **body: Any) -> tuple[Any, float]:
    started = time.monotonic()
    answer = client.post("/api/v1/policies/check/", {"cluster": "demo", **body}, format="json")
    return answer, time.monotonic() - started


@pytest.mark.django_db
def test_the_540_byte_alias_bomb_is_a_fast_400_naming_the_aliases(demo: Cluster) -> None:
    answer, took = check(APIClient(), manifests=SEED_MODEL, policies=policy_bomb())

    assert took < 2
    assert answer.status_code == 400, answer.content
    assert answer.json()["field"] == "policies"
    assert "YAML aliases are not accepted (nor anchors)" in answer.json()["detail"]


@pytest.mark.django_db
def test_20000_small_policies_are_a_fast_400(demo: Cluster) -> None:
    answer, took = check(APIClient(), manifests=SEED_MODEL, policies=many_policies())

    assert took < 3
    assert answer.status_code == 400, answer.content[:300]
    assert "policies" in answer.json()["field"]


@pytest.mark.django_db
def test_a_manifest_alias_bomb_is_a_fast_400(demo: Cluster) -> None:
    answer, took = check(APIClient(), manifests=manifest_bomb())

    assert took < 2
    assert answer.status_code == 400, answer.content
    assert "aliases are not accepted" in answer.json()["detail"]


@pytest.mark.django_db
def test_a_caller_without_a_role_is_refused_before_the_policies_are_parsed(
    demo: Cluster, django_user_model: Any, settings: Any
) -> None:
    settings.API_ANONYMOUS_READ = False
    client = APIClient()
    client.force_login(django_user_model.objects.create_user(username="nobody", password="x" * 20))

    answer, took = check(client, manifests=SEED_MODEL, policies=policy_bomb())

    assert took < 2
    # As for any cluster the caller may not read: named as unknown, and the policies unread.
    assert answer.status_code == 400, answer.content
    assert answer.json() == {"detail": "no cluster named 'demo'", "code": "cluster", "field": "cluster"}
