"""The matrix page for a whole cluster: export links for every namespace, and the cluster a
reader chose stays chosen when another cluster is registered."""

from __future__ import annotations

import pytest
from django.test import Client

from inventory.models import Cluster

pytestmark = pytest.mark.django_db


def test_the_matrix_links_to_an_export_of_every_namespace_and_of_this_one(demo: Cluster, client: Client) -> None:
    body = client.get("/matrix/", {"namespace": "research"}).content.decode()

    assert 'href="/api/v1/matrix/cells/export.csv?cluster=demo&amp;reasons=true"' in body
    assert 'href="/api/v1/matrix/cells/export.json?cluster=demo&amp;reasons=true"' in body
    assert 'href="/api/v1/matrix/cells/export.csv?cluster=demo&amp;namespace=research&amp;reasons=true"' in body


def test_the_chosen_cluster_stays_chosen_when_another_is_registered(demo: Cluster, client: Client) -> None:
    client.get("/matrix/")
    Cluster.objects.create(name="aaa-new", source=Cluster.Source.MANIFESTS)

    response = client.get("/matrix/")

    assert response.context["cluster"] == demo
