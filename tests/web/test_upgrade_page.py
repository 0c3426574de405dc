"""The upgrade page, reached from the matrix header, and the OME profile note on every page
that shows a cluster's data."""

from __future__ import annotations

import re

import pytest
from django.test import Client

import matching
from inventory.models import Cluster
from inventory.ome_release import ome_version_set_admin
from tests.web.conftest import HOSTILE

pytestmark = pytest.mark.django_db


def upgrade_link(html: str) -> str:
    found = re.search(r'<a href="(/matrix/upgrade/\?cluster=[^"]+)">What an OME upgrade changes', html)
    assert found, "the matrix header links to the upgrade page"
    return found.group(1).replace("&amp;", "&")


@pytest.mark.parametrize("page", ["/matrix/", "/inferenceservices/", "/lint/"])
def test_every_cluster_page_says_which_profile_judges_it_and_why(client: Client, cluster: Cluster, page: str) -> None:
    html = client.get(page, {"cluster": cluster.name}).content.decode()

    assert f'data-profile="{matching.NEWEST_BEHAVIOUR}"' in html
    assert "a manifest snapshot registered without an OME version: judged by the newest profile" in html


def test_the_matrix_header_leads_to_what_17b77eda_would_change(client: Client, cluster: Cluster) -> None:
    link = upgrade_link(client.get("/matrix/").content.decode())

    html = client.get(link, {"to": "17b77eda"}).content.decode()

    assert "<h1>What another OME would change</h1>" in html
    row = re.search(r"<tr>\s*<th scope=\"row\">research/qwen-image-pipeline</th>(.*?)</tr>", html, re.S)
    assert row, "the seed InferenceService is listed"
    assert "<td>verdict</td>" in row.group(1)
    assert '<td class="reason">advisory</td>' in row.group(1)
    assert '<td class="reason">blocked</td>' in row.group(1)
    assert "U5 (older OME): an incompatible named runtime is used anyway" in row.group(1)
    assert "<dt>U1</dt>" in html


def test_a_cluster_on_17b77eda_sees_what_the_newest_ome_changes(client: Client, cluster: Cluster) -> None:
    ome_version_set_admin(cluster, "17b77eda")

    html = client.get("/matrix/upgrade/", {"cluster": cluster.name}).content.decode()

    assert 'data-profile="17b77eda"' in html
    assert "U5 (newer OME)" in html
    assert "OME 17b77eda given at registration: profile 17b77eda" in html


def test_an_unknown_profile_is_a_400_page_and_the_value_is_escaped(client: Client, cluster: Cluster) -> None:
    response = client.get("/matrix/upgrade/", {"cluster": cluster.name, "to": HOSTILE})

    assert response.status_code == 400
    html = response.content.decode()
    assert HOSTILE not in html
    assert "unknown OME behaviour" in html


def test_the_sync_page_and_the_clusters_api_say_which_profile_judges_each_cluster(
    client: Client, cluster: Cluster
) -> None:
    from rest_framework.test import APIClient

    html = client.get("/sync/").content.decode()
    body = APIClient().get("/api/v1/clusters/").json()

    assert f'data-profile="{matching.NEWEST_BEHAVIOUR}"' in html
    listed = body["results"] if isinstance(body, dict) else body
    [demo] = [item for item in listed if item["name"] == cluster.name]
    assert (demo["ome"]["profile"], demo["ome"]["source"]) == (matching.NEWEST_BEHAVIOUR, "registration")


def test_the_page_compares_with_an_upstream_proposal_and_says_it_is_one(client: Client, cluster: Cluster) -> None:
    html = client.get("/matrix/upgrade/", {"cluster": cluster.name, "to": "pr603"}).content.decode()

    assert '<optgroup label="Upstream proposals (not released)">' in html
    assert '<option value="pr603" selected>pr603: ome-projects/ome#603</option>' in html
    assert 'id="proposal-note"' in html
    assert "<dt>P603</dt>" in html
