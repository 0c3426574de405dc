"""Safe defaults and hardening, attacked: anonymous reads, CSRF, hostile strings, oversize
bodies, YAML bombs, login brute force, throttles, /metrics without a token, the CSP, error
pages and the audit log's caps."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache
from django.http import HttpRequest
from django.test import Client, RequestFactory
from pytest_django import Settings
from rest_framework.throttling import ScopedRateThrottle

from core.api import failed
from inventory.models import Cluster, Resource
from patches.models import PatchAttempt
from patches.services import patch_apply

from .conftest import signed_in
from .test_tenants import ids

pytestmark = pytest.mark.django_db


def anonymous_paths(cluster: Cluster) -> list[str]:
    pk = ids(cluster)
    model, runtime = pk["shared-llama"], pk["shared-runtime"]
    return [
        "/matrix/",
        "/matrix/counts/?cluster=tenants",
        f"/models/{model}/",
        f"/runtimes/{runtime}/",
        f"/cells/{model}/{runtime}/_cluster/",
        f"/models/{model}/patch/?runtime={runtime}",
        f"/models/{model}/model-index/",
        "/inferenceservices/",
        "/lint/",
        "/sync/",
        "/api/v1/clusters/",
        "/api/v1/sync-states/",
        "/api/v1/models/",
        f"/api/v1/models/{model}/",
        "/api/v1/runtimes/",
        "/api/v1/inference-services/",
        "/api/v1/inference-services/verdicts/",
        "/api/v1/matrix/cells/",
        "/api/v1/matrix/cells/export.csv",
        "/api/v1/matrix/cells/export.json",
        f"/api/v1/matrix/selection/?model={model}",
        "/api/v1/matrix/builds/",
        "/api/v1/matrix/history/",
        "/api/v1/matrix/lint/",
        "/api/v1/patches/audit/",
        "/metrics",
    ]


def test_anonymous_reads_are_refused_with_the_default_settings(tenants: Cluster, client: Client) -> None:
    answers = {path: client.get(path) for path in anonymous_paths(tenants)}

    refused = {path: r.status_code for path, r in answers.items() if r.status_code not in (302, 401, 403)}
    assert refused == {}
    pages = [r for path, r in answers.items() if not path.startswith(("/api/", "/metrics"))]
    assert {r["Location"].split("?")[0] for r in pages} == {"/accounts/login/"}
    whatif = client.post("/api/v1/matrix/whatif/", {"cluster": "tenants", "deletions": []}, "application/json")
    assert whatif.status_code == 401
    assert all("shared-llama" not in r.content.decode() for r in answers.values())


def test_writes_without_the_csrf_token_are_refused(tenants: Cluster, django_user_model: Any) -> None:
    user = django_user_model.objects.create_superuser("root")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    model = ids(tenants)["shared-llama"]

    page = client.post(f"/models/{model}/patch/", {"patch": "{}", "resource_version": "x"})
    api = client.post(
        "/api/v1/patches/apply/",
        {"cluster": "tenants", "model": model, "patch": {}, "resource_version": "x"},
        "application/json",
    )
    resync = client.post("/sync/tenants/resync/")

    assert (page.status_code, api.status_code, resync.status_code) == (403, 403, 403)
    assert "security token is missing or wrong" in page.content.decode()
    assert "CSRF" in api.json()["detail"]
    assert not PatchAttempt.objects.exists()


HOSTILE = '"><script>alert(1)</script><img src=x onerror=alert(2)>'


def test_hostile_strings_from_a_cluster_and_from_users_are_shown_escaped(
    tmp_path: Path, django_user_model: Any, settings: Settings
) -> None:
    import json

    from inventory.services import ClusterSpec, cluster_register, manifests_load
    from matrix.services import matrix_rebuild

    objects = [
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "ClusterBaseModel",
            "metadata": {"name": "m", "annotations": {"note": HOSTILE}},
            "spec": {
                "modelFormat": {"name": HOSTILE},
                "modelArchitecture": HOSTILE,
                "diffusionPipeline": {"className": HOSTILE},
            },
        },
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "ClusterServingRuntime",
            "metadata": {"name": "r"},
            "spec": {
                "supportedModelFormats": [{"modelFormat": {"name": HOSTILE}, "modelArchitecture": "=cmd|' /C calc'!A0"}]
            },
        },
    ]
    (tmp_path / "o.yaml").write_text("\n---\n".join(json.dumps(o) for o in objects))
    cluster = cluster_register(ClusterSpec("hostile", Cluster.Source.MANIFESTS, manifests=(str(tmp_path),)))
    manifests_load(cluster, cluster.manifests, prune=True)
    matrix_rebuild(cluster)
    client = signed_in(django_user_model.objects.create_superuser("root"))
    model, runtime = (Resource.objects.get(cluster=cluster, name=name).pk for name in ("m", "r"))

    pages = [
        "/matrix/?cluster=hostile",
        f"/models/{model}/",
        f"/runtimes/{runtime}/",
        f"/cells/{model}/{runtime}/_cluster/",
        "/lint/?cluster=hostile",
        f"/matrix/?cluster=hostile&search={HOSTILE}",
        f"/models/{model}/patch/?pipeline={HOSTILE}",
    ]
    shown = {path: client.get(path).content.decode() for path in pages}
    index = client.post(
        f"/models/{model}/model-index/", {"text": '{"_class_name": "' + HOSTILE.replace('"', "'") + '"}'}
    )
    csv = b"".join(client.get("/api/v1/matrix/cells/export.csv?cluster=hostile").streaming_content).decode()

    assert {path: "<script>alert(1)" in text or "<img src=x" in text for path, text in shown.items()} == dict.fromkeys(
        pages, False
    )
    assert "<script>alert(1)" not in index.content.decode()
    assert "=cmd|" not in csv.replace("'=cmd|", "")


def test_an_oversize_body_is_refused_before_it_is_read(
    tenants: Cluster, django_user_model: Any, settings: Settings
) -> None:
    settings.REQUEST_MAX_BYTES = 10_000
    client = signed_in(django_user_model.objects.create_superuser("root"))

    api = client.post("/api/v1/matrix/whatif/", {"cluster": "tenants", "manifests": "x" * 20_000}, "application/json")
    page = client.post(f"/models/{ids(tenants)['shared-llama']}/model-index/", {"text": "x" * 20_000})

    assert (api.status_code, api.json()["code"]) == (413, "request_too_large")
    assert page.status_code == 413


BILLION_LAUGHS = "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n"
    for i in range(8)
)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"manifests": BILLION_LAUGHS}, "YAML aliases are not accepted"),
        ({"manifests": "[" * 5000}, "nested too deeply"),
        ({"manifests": "- x\n" * 2000}, "more than 1000 values"),
        ({"objects": [{"kind": "ClusterBaseModel", "spec": {"x": list(range(2000))}}]}, "more than 1000 values"),
    ],
    ids=["billion-laughs", "deep-nesting", "too-many-yaml-nodes", "too-many-json-nodes"],
)
def test_yaml_bombs_and_huge_documents_are_refused_plainly(
    tenants: Cluster, django_user_model: Any, settings: Settings, body: dict[str, Any], message: str
) -> None:
    settings.OME_WHATIF_MAX_NODES = 1000
    client = signed_in(django_user_model.objects.create_superuser("root"))

    response = client.post("/api/v1/matrix/whatif/", {"cluster": "tenants", **body}, "application/json")

    assert response.status_code == 400, response.content
    assert message in response.json()["detail"]


def test_deeply_nested_json_is_a_client_error_not_a_crash(tenants: Cluster, django_user_model: Any) -> None:
    client = signed_in(django_user_model.objects.create_superuser("root"))

    response = client.post("/api/v1/matrix/whatif/", "[" * 100_000 + "]" * 100_000, "application/json")

    assert response.status_code == 400


def test_login_brute_force_locks_the_account_out_even_for_the_right_password(
    db: None, django_user_model: Any, settings: Settings
) -> None:
    settings.AXES_FAILURE_LIMIT = 3
    django_user_model.objects.create_user("ada", password="the-right-password-1")
    client = Client()

    tries = [
        client.post("/accounts/login/", {"username": "ada", "password": f"guess-{n}"}).status_code for n in range(3)
    ]
    right = client.post("/accounts/login/", {"username": "ada", "password": "the-right-password-1"})
    api = Client().post("/accounts/login/", {"username": "ada", "password": "the-right-password-1"})

    assert tries[:2] == [200, 200]
    assert right.status_code == 429
    assert "Too many failed sign-ins" in right.content.decode()
    assert "_auth_user_id" not in client.session
    assert api.status_code == 429  # same address: locked


@pytest.mark.parametrize(
    ("scope", "method", "path", "body"),
    [
        (
            "whatif",
            "post",
            "/api/v1/matrix/whatif/",
            {"cluster": "tenants", "deletions": ["ClusterServingRuntime/shared-runtime"]},
        ),
        (
            "patch-preview",
            "post",
            "/api/v1/patches/preview/",
            {"cluster": "tenants", "model": "ClusterBaseModel/shared-llama", "diffusionPipeline": {"className": "X"}},
        ),
        ("model-index", "post", "/api/v1/patches/pipeline-from-model-index/", {"model_index": '{"_class_name": "X"}'}),
        ("export", "get", "/api/v1/matrix/cells/export.csv?cluster=tenants", None),
        ("whatif-check", "post", "/api/v1/whatif/check/", {"cluster": "tenants", "manifests": ""}),
        ("policy-check", "post", "/api/v1/policies/check/", {"cluster": "tenants", "manifests": ""}),
    ],
)
def test_expensive_endpoints_are_throttled(
    tenants: Cluster,
    django_user_model: Any,
    monkeypatch: pytest.MonkeyPatch,
    scope: str,
    method: str,
    path: str,
    body: Any,
) -> None:
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {scope: "2/min"})
    cache.clear()
    client = signed_in(django_user_model.objects.create_superuser("root"))

    def call() -> int:
        if method == "get":
            return client.get(path).status_code
        return client.post(path, body, "application/json").status_code

    statuses = [call() for _ in range(3)]

    assert 429 not in statuses[:2], statuses
    assert statuses[2] == 429, statuses


def test_metrics_need_a_token_when_debug_is_off(tenants: Cluster, client: Client, settings: Settings) -> None:
    unset = client.get("/metrics")
    settings.METRICS_TOKEN = "scrape-token"
    wrong = client.get("/metrics", HTTP_AUTHORIZATION="Bearer nope")
    right = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-token")

    assert (unset.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert b"set METRICS_TOKEN" in unset.content
    assert b'cluster="tenants"' in right.content


def test_pages_carry_a_csp_without_inline_script_or_style(tenants: Cluster, django_user_model: Any) -> None:
    response = signed_in(django_user_model.objects.create_superuser("root")).get("/matrix/?cluster=tenants")

    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "style-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy


INLINE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle=|\son[a-z]+\s*=|javascript:", re.IGNORECASE)


def test_templates_and_static_files_hold_no_inline_script_or_style() -> None:
    base = Path(django_settings.BASE_DIR)
    found = [
        f"{path.relative_to(base)}: {match.group(0)}"
        for folder in ("templates", "static")
        for path in sorted((base / folder).rglob("*"))
        if path.suffix in (".html", ".js", ".svg")
        for match in INLINE.finditer(path.read_text())
    ]
    assert found == []


def test_error_pages_are_in_the_dashboards_style(tenants: Cluster, django_user_model: Any) -> None:
    client = signed_in(django_user_model.objects.create_user("nobody"))
    missing = client.get("/models/999999/")
    forbidden = client.post("/sync/tenants/resync/")  # no role on the cluster: not found either
    request = RequestFactory().get("/matrix/")
    crashed = failed(request)

    assert missing.status_code == 404
    assert forbidden.status_code in (403, 404)
    for response in (missing, forbidden, crashed):
        text = response.content.decode()
        assert "css/site.css" in text, text[:200]
        assert 'class="site-header"' in text, text[:200]
    assert "Not found" in missing.content.decode()
    assert crashed.status_code == 500
    assert "Server error" in crashed.content.decode()


def test_a_huge_patch_body_is_stored_capped_in_the_audit_log(
    tenants: Cluster, django_user_model: Any, settings: Settings
) -> None:
    settings.OME_AUDIT_PATCH_MAX_BYTES = 2000
    user = django_user_model.objects.create_superuser("root")
    body = {"spec": {"diffusionPipeline": {"className": "X" * 50_000}}, "metadata": {"labels": {"token": "t0ken"}}}

    outcome = patch_apply(tenants, model="ClusterBaseModel/shared-llama", patch=body, resource_version="x", user=user)

    stored = PatchAttempt.objects.get(pk=outcome.attempt.pk).patch
    assert outcome.result == "rejected"
    assert stored["truncated"] is True
    assert stored["bytes"] > 50_000
    assert len(stored["start"]) <= 2000


def test_patch_bodies_in_the_audit_log_are_redacted(tenants: Cluster, django_user_model: Any) -> None:
    user = django_user_model.objects.create_superuser("root")
    body = {"metadata": {"annotations": {"note": "HF_TOKEN=hf_leak"}}, "spec": {"password": "p"}}

    outcome = patch_apply(tenants, model="ClusterBaseModel/shared-llama", patch=body, resource_version="x", user=user)

    assert "hf_leak" not in str(outcome.attempt.patch)
    assert "'p'" not in str(outcome.attempt.patch)


def test_the_request_object_is_required_by_the_login_throttle() -> None:
    # django-axes refuses to check a sign-in it cannot attribute to an address: a code path
    # that authenticates without the request fails loudly instead of skipping the lockout.
    from axes.exceptions import AxesBackendRequestParameterRequired
    from django.contrib.auth import authenticate

    with pytest.raises(AxesBackendRequestParameterRequired):
        authenticate(username="ada", password="x")
    assert authenticate(request=HttpRequest(), username="ada", password="x") is None


def test_the_api_docs_page_needs_no_inline_script(db: None, django_user_model: Any) -> None:
    page = signed_in(django_user_model.objects.create_superuser("root")).get("/api/docs/")

    assert page.status_code == 200
    assert INLINE.findall(page.content.decode()) == []


@pytest.mark.parametrize(
    ("scope", "method", "page", "data"),
    [
        ("whatif", "post", "/runtimes/{runtime}/what-if/", {"manifest": "kind: ClusterServingRuntime"}),
        ("model-index", "post", "/models/{model}/model-index/", {"text": "{}"}),
        ("patch-preview", "get", "/models/{model}/patch/?runtime={runtime}", None),
    ],
)
def test_the_pages_doing_the_same_work_share_the_throttle(
    tenants: Cluster,
    django_user_model: Any,
    monkeypatch: pytest.MonkeyPatch,
    scope: str,
    method: str,
    page: str,
    data: Any,
) -> None:
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", {scope: "2/min"})
    cache.clear()
    client = signed_in(django_user_model.objects.create_superuser("root"))
    pk = ids(tenants)
    path = page.format(runtime=pk["shared-runtime"], model=pk["shared-llama"])

    statuses = [(client.get(path) if method == "get" else client.post(path, data)).status_code for _ in range(3)]

    assert 429 not in statuses[:2], statuses
    assert statuses[2] == 429
