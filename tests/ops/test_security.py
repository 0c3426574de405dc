"""Security across the whole URL map: no write without a login and the permission, hostile YAML
and oversized bodies refused quickly and plainly, the production security settings and headers.

Elsewhere: the audit log is append-only from the UI and the admin (tests/patches/test_admin.py),
user-supplied strings are escaped on every page (tests/web/test_escaping.py), a too-large or
malformed model_index.json is refused with a clear error (tests/patches/test_services.py,
test_a_bad_model_index_upload_is_refused_with_a_clear_error; tests/patches/test_api.py)."""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from inventory.models import Cluster, Resource
from matrix.selectors import current_build
from patches.models import PatchAttempt

WRITE_METHODS = ("post", "put", "patch", "delete")
# POSTs that only compute (what-if, a policy check, parsing a model_index.json): they may answer 200 to anyone
# who may read. Django's own login and password pages answer forms (an invalid reset link shows
# a page saying so). Either way nothing may be written: the database is compared afterwards.
READ_ONLY_POSTS = {
    "api/v1/matrix/whatif/",
    "api/v1/policies/check/",
    "api/v1/patches/pipeline-from-model-index/",
    "runtimes/{runtime}/what-if/",
    "models/{model}/model-index/",
}
AUTH_PAGES = "accounts/"
REFUSED = {301, 302, 400, 401, 403, 404, 405}


def routes(patterns: list[Any], prefix: str = "") -> Iterator[str]:
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            yield route


def concrete(route: str, values: dict[str, str]) -> str:
    """A path for a route, every parameter filled in from `values` by its name."""
    path = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values.get(m[1], "1"), route)
    path = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: values.get(m[1], "1"), path)
    return path.replace("^", "").replace("$", "").replace("\\.", ".")


def every_path(ids: dict[str, int]) -> list[tuple[str, str]]:
    """(route template, path) for every URL but the admin's, once per kind of object an id may name."""
    found = []
    for route in routes(get_resolver().url_patterns):
        if route.startswith("admin/"):
            continue
        template = route.replace("<int:pk>", "{object}").replace("(?P<pk>[^/.]+)", "{object}")
        for kind, pk in ids.items() if "{object}" in template else [("none", 0)]:
            values = {
                "model_id": str(ids["model"]),
                "runtime_id": str(ids["runtime"]),
                "scope": "_cluster",
                "name": "seed",
                "uidb64": "MQ",
                "token": "set-password",
            }
            path = concrete(template.replace("{object}", str(pk)), values)
            found.append((_named(route, kind), path))
    return found


def _named(route: str, kind: str) -> str:
    return route.replace("<int:pk>", "{" + kind + "}").replace("(?P<pk>[^/.]+)", "{" + kind + "}")


def database_state() -> dict[str, str]:
    """Every stored row (but the audit log, checked apart), by model: what a write would change."""
    out = io.StringIO()
    call_command(
        "dumpdata",
        "inventory",
        "matrix",
        "isvcs",
        "auth.user",
        "auth.group",
        "access.apitoken",
        "admin",
        stdout=out,
    )
    state: dict[str, list[Any]] = {}
    for row in json.loads(out.getvalue()):
        state.setdefault(row["model"], []).append(row)
    return {model: json.dumps(rows, sort_keys=True) for model, rows in state.items()}


def changed_models(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(model for model in before.keys() | after.keys() if before.get(model) != after.get(model))


def audit_results_since(last_pk: int) -> set[str]:
    """A refused patch is still recorded (as `denied`): the only rows a refused write may add."""
    return set(PatchAttempt.objects.filter(pk__gt=last_pk).values_list("result", flat=True))


@pytest.fixture
def ids(seed: Cluster) -> dict[str, int]:
    build = current_build(seed)
    assert build is not None
    attempt = PatchAttempt.objects.create(cluster_name="seed", model_name="m", result="applied")
    return {
        "model": Resource.objects.get(cluster=seed, name="qwen-image-pvc").pk,
        "runtime": Resource.objects.filter(cluster=seed, kind="ClusterServingRuntime").first().pk,  # type: ignore[union-attr]
        "build": build.pk,
        "attempt": attempt.pk,
    }


def attempt_every_write(client: Client, ids: dict[str, int]) -> list[str]:
    """Every write method on every URL; returns the requests that were not refused."""
    accepted = []
    for route, path in every_path(ids):
        for method in WRITE_METHODS:
            if method == "post":
                response = client.post(f"/{path}", {"manifest": "", "text": "{}"})
            else:
                response = getattr(client, method)(f"/{path}", "{}", content_type="application/json")
            answers_forms = route.startswith(AUTH_PAGES) or (method == "post" and route in READ_ONLY_POSTS)
            allowed = REFUSED | ({200} if answers_forms else set())
            if response.status_code not in allowed:
                accepted.append(f"{method.upper()} /{path} -> {response.status_code}")
    return accepted


@pytest.mark.django_db
def test_no_url_accepts_a_write_from_an_anonymous_user(ids: dict[str, int]) -> None:
    client = Client(raise_request_exception=False)
    before = database_state()

    accepted = attempt_every_write(client, ids)

    assert accepted == []
    assert changed_models(before, database_state()) == []
    assert audit_results_since(ids["attempt"]) == set()


@pytest.mark.django_db
def test_no_url_accepts_a_write_from_a_user_without_permissions(ids: dict[str, int], django_user_model: Any) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(django_user_model.objects.create_user("mallory"))
    before = database_state()

    accepted = attempt_every_write(client, ids)

    assert accepted == []
    assert changed_models(before, database_state()) == []
    assert audit_results_since(ids["attempt"]) <= {"denied"}


def billion_laughs(depth: int = 9) -> str:
    """A manifest whose `spec.extra` is 9**depth strings once its YAML aliases are expanded."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, depth)]
    anchors = "\n  ".join(lines)
    return f"""apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: laughs
spec:
  {anchors}
  supportedModelFormats: [{{name: safetensors, autoSelect: true}}]
  extra: *l{depth - 1}
"""


@pytest.mark.django_db
def test_a_billion_laughs_manifest_in_what_if_is_answered_at_once_without_expanding(seed: Cluster) -> None:
    client = Client(raise_request_exception=False)
    runtime = Resource.objects.filter(cluster=seed, kind="ClusterServingRuntime").first()
    assert runtime is not None

    started = time.monotonic()
    api = client.post(
        "/api/v1/matrix/whatif/", {"cluster": "seed", "manifests": billion_laughs()}, content_type="application/json"
    )
    page = client.post(f"/runtimes/{runtime.pk}/what-if/", {"manifest": billion_laughs()})
    took = time.monotonic() - started

    assert took < 3
    assert api.status_code in (200, 400)
    assert page.status_code in (200, 400)
    assert len(api.content) < 100_000
    assert b"lol" not in api.content


@pytest.mark.django_db
def test_a_billion_laughs_manifest_in_what_if_is_refused_naming_the_aliases(seed: Cluster) -> None:
    client = Client(raise_request_exception=False)

    response = client.post(
        "/api/v1/matrix/whatif/", {"cluster": "seed", "manifests": billion_laughs()}, content_type="application/json"
    )

    assert response.status_code == 400
    assert "alias" in response.json()["detail"].lower()


@pytest.mark.django_db
def test_a_body_above_the_request_limit_is_refused_before_it_is_read(seed: Cluster, settings: Any) -> None:
    settings.REQUEST_MAX_BYTES = 64 * 1024
    client = Client(raise_request_exception=False)
    model = Resource.objects.get(cluster=seed, name="qwen-image-pvc")
    big = "x" * (65 * 1024)

    api = client.post("/api/v1/matrix/whatif/", {"cluster": "seed", "manifests": big}, content_type="application/json")
    upload = client.post(f"/models/{model.pk}/model-index/", {"file": io.BytesIO(big.encode()), "text": ""})

    assert api.status_code == 413
    assert api.json() == {
        "detail": "the request body is larger than 64 KiB (REQUEST_MAX_BYTES)",
        "code": "request_too_large",
        "field": None,
    }
    assert upload.status_code == 413
    assert b"larger than 64 KiB" in upload.content


@pytest.mark.django_db
def test_manifests_above_the_what_if_limit_get_a_clear_error(seed: Cluster) -> None:
    client = Client(raise_request_exception=False)
    big = "# padding\n" * (1024 * 1024 // 10 + 1)

    response = client.post(
        "/api/v1/matrix/whatif/", {"cluster": "seed", "manifests": big}, content_type="application/json"
    )

    assert response.status_code == 400
    assert "larger than" in response.json()["detail"]


@pytest.mark.django_db
def test_pages_carry_the_security_headers(client: Client, settings: Any) -> None:
    response = client.get("/")

    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


@pytest.mark.django_db
def test_hsts_is_sent_over_https_once_configured(client: Client, settings: Any) -> None:
    settings.SECURE_HSTS_SECONDS = 31536000

    plain = client.get("/")
    tls = client.get("/", secure=True)

    assert "Strict-Transport-Security" not in plain
    assert tls["Strict-Transport-Security"] == "max-age=31536000"


PRODUCTION = {
    "DEBUG": "false",
    "ALLOWED_HOSTS": "ome.example",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto,https",
    "SECURE_SSL_REDIRECT": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=settings.BASE_DIR,
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_djangos_deployment_checklist_passes_with_the_documented_production_settings() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=secrets.token_urlsafe(50), **PRODUCTION)

    assert result.returncode == 0, result.stdout + result.stderr


SHOW_SECURITY = """
import json
from ome_dashboard import settings as s
print(json.dumps({name: getattr(s, name, None) for name in (
    "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_PROXY_SSL_HEADER", "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS", "X_FRAME_OPTIONS", "SECURE_CONTENT_TYPE_NOSNIFF", "SECURE_REFERRER_POLICY")}))
"""


def security_settings(**env: str) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-c", SHOW_SECURITY],
        cwd=settings.BASE_DIR,
        env={"PATH": os.environ["PATH"], **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def test_with_debug_off_cookies_are_secure_and_tls_settings_come_from_the_environment() -> None:
    defaults = security_settings(DEBUG="false", SECRET_KEY="k", ALLOWED_HOSTS="ome.example")
    behind_tls = security_settings(SECRET_KEY="k", **PRODUCTION)
    development = security_settings(DEBUG="true")

    assert defaults == {
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_PROXY_SSL_HEADER": None,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 0,
        "X_FRAME_OPTIONS": "DENY",
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "SECURE_REFERRER_POLICY": "same-origin",
    }
    assert behind_tls["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert (behind_tls["SECURE_SSL_REDIRECT"], behind_tls["SECURE_HSTS_SECONDS"]) == (True, 31536000)
    assert development["SESSION_COOKIE_SECURE"] is False


def test_a_malformed_proxy_header_setting_refuses_to_start() -> None:
    result = manage("check", DEBUG="true", SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto")

    assert result.returncode != 0
    assert "SECURE_PROXY_SSL_HEADER must be HEADER,VALUE" in result.stderr
