"""The project-level URLs: home, health check, API root, schema, docs, admin, static files."""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest
from django.test import Client


class LinkCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [value for name, value in attrs if name in {"href", "src"} and value is not None]


def linked_urls(html: str) -> list[str]:
    collector = LinkCollector()
    collector.feed(html)
    return collector.urls


def test_healthz_answers_ok_as_json(client: Client) -> None:
    response = client.get("/healthz")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"status": "ok"}


def test_api_root_answers_json_with_version_and_endpoints(client: Client) -> None:
    response = client.get("/api/v1/")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["version"] == "v1"
    assert body["endpoints"]["schema"] == "http://testserver/api/schema/"
    assert body["endpoints"]["docs"] == "http://testserver/api/docs/"


def test_schema_answers_openapi_json(client: Client) -> None:
    response = client.get("/api/schema/", {"format": "json"})

    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert schema["info"]["title"] == "OME Compat API"


def test_docs_page_serves_swagger_ui_from_local_static_files(client: Client) -> None:
    response = client.get("/api/docs/")

    assert response.status_code == 200
    urls = linked_urls(response.content.decode())
    assert any("drf_spectacular_sidecar/swagger-ui-dist/" in url for url in urls)
    assert [url for url in urls if urlsplit(url).scheme or urlsplit(url).netloc] == []


@pytest.mark.django_db
def test_admin_login_page_answers(client: Client) -> None:
    response = client.get("/admin/login/")

    assert response.status_code == 200
    assert b'name="password"' in response.content


@pytest.mark.django_db
def test_admin_sends_anonymous_users_to_the_login_page(client: Client) -> None:
    response = client.get("/admin/")

    assert response.status_code == 302
    assert response["Location"] == "/admin/login/?next=/admin/"


def test_home_page_names_the_product_and_links_to_the_api(client: Client) -> None:
    response = client.get("/")

    assert response.status_code == 200
    assert "<h1>OME Compat</h1>" in response.content.decode()
    assert "/api/v1/" in linked_urls(response.content.decode())


def test_home_page_loads_nothing_from_other_hosts(client: Client) -> None:
    response = client.get("/")

    urls = linked_urls(response.content.decode())
    assert "/static/css/site.css" in urls
    assert [url for url in urls if urlsplit(url).scheme or urlsplit(url).netloc] == []


def test_site_stylesheet_is_served(client: Client) -> None:
    response = client.get("/static/css/site.css")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/css")


def test_healthz_refuses_post(client: Client) -> None:
    response = client.post("/healthz")

    assert response.status_code == 405
