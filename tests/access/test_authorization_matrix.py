"""The authorization matrix: every URL pattern of the URLconf, driven by every role, against two
clusters with two tenants each (tests/access/world.py), with every object id of the database in
its id parameters. Nothing of a cluster or namespace its reader may not read appears in any
status, header or body, and a hidden object answers exactly as a missing one.

Complete by construction: the patterns come from the URLconf, so a new endpoint is walked the
day it is added; one with a path parameter the walk cannot fill fails the test until DRIVES
says how to drive it.
"""

from __future__ import annotations

import itertools
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.apps import apps
from django.db import models
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from pytest_django import Settings
from rest_framework.throttling import ScopedRateThrottle

from access.models import ApiToken, Grant
from access.restrict import Tenancy
from access.tokens import api_token_create
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Kind, Resource
from matrix.models import CellChange, MatrixBuild
from patches.models import PatchAttempt
from tests.access.world import (
    CLUSTERS,
    HOME,
    HOME_NS,
    NAMESPACES,
    ROLES,
    RoleSpec,
    build_world,
    rows_per_tenant_model,
)
from tests.support.answers import answer, body_text, normalized

pytestmark = pytest.mark.django_db

MISSING_ID, MISSING_CLUSTER, MISSING_NAMESPACE = 987654, "nowhere", "nowhere-ns"
PROFILE = bool(os.environ.get("AUTHZ_PROFILE"))


@dataclass(frozen=True)
class Names:
    """What the swept `{id}` of a request names: rows of `model` (Resources of `kinds`)."""

    model: type[models.Model]
    kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Drive:
    """One request template. `{id}` is swept over every id of the database (naming `names`),
    `{cluster}` over the clusters, `{ns}` over the namespaces of `qxa`; `{res:NAME}` is the id
    of the Resource NAME. At most one of the three is swept per template."""

    url: str
    names: Names | None = None
    method: str = "get"


MODELS = Names(Resource, MODEL_KINDS)
RUNTIMES = Names(Resource, RUNTIME_KINDS)
ISVCS = Names(Resource, (Kind.INFERENCE_SERVICE,))
SHARED_MODEL, SHARED_RUNTIME = "{res:qxa-shared-model}", "{res:qxa-shared-runtime}"
# Pages and endpoints without a path parameter: plain, then with each cluster and each namespace.
BY_QUERY = (Drive(""), Drive("?cluster={cluster}"), Drive(f"?cluster={HOME}&namespace={{ns}}"))

# How to drive the patterns a walk cannot drive alone (path parameters), and the endpoints
# whose queries name objects by id. Keyed by URL name.
DRIVES: dict[str, tuple[Drive, ...]] = {
    "matrix:cell": (
        Drive(f"/cells/{{id}}/{SHARED_RUNTIME}/_cluster/", MODELS),
        Drive(f"/cells/{SHARED_MODEL}/{{id}}/_cluster/", RUNTIMES),
        Drive(f"/cells/{SHARED_MODEL}/{SHARED_RUNTIME}/{{ns}}/"),
    ),
    "matrix:cell-reason": (
        Drive(f"/cells/{{id}}/{SHARED_RUNTIME}/_cluster/reason/", MODELS),
        Drive(f"/cells/{SHARED_MODEL}/{{id}}/_cluster/reason/", RUNTIMES),
        Drive(f"/cells/{SHARED_MODEL}/{SHARED_RUNTIME}/{{ns}}/reason/"),
    ),
    "matrix:model": (Drive("/models/{id}/", MODELS), Drive(f"/models/{SHARED_MODEL}/?namespace={{ns}}")),
    "matrix:runtime": (Drive("/runtimes/{id}/", RUNTIMES),),
    "patches:patch": (
        Drive("/models/{id}/patch/", MODELS),
        Drive(f"/models/{SHARED_MODEL}/patch/?runtime={{id}}", RUNTIMES),
    ),
    "patches:model-index": (Drive("/models/{id}/model-index/", MODELS),),
    "patches:patch-result": (Drive("/patches/{id}/", Names(PatchAttempt)),),
    "whatif:runtime-whatif": (Drive("/runtimes/{id}/what-if/", RUNTIMES),),
    "whatif:near-misses": (
        Drive("/models/{id}/near-misses/", MODELS),
        Drive(f"/models/{SHARED_MODEL}/near-misses/?runtime={{id}}", RUNTIMES),
        Drive(f"/models/{SHARED_MODEL}/near-misses/?namespace={{ns}}"),
    ),
    "inventory:resync": (Drive("/sync/{cluster}/resync/"),),
    # POST only, as resync: a POST's message would show on the next page walked, not the 404 compared.
    "inventory:ome-version": (Drive("/sync/{cluster}/ome-version/"),),
    "history": (*BY_QUERY, Drive(f"/history/?cluster={HOME}&patch={{id}}", Names(PatchAttempt))),
    "api:cluster-detail": (Drive("/api/v1/clusters/{cluster}/"),),
    # The admission webhook's endpoint, per cluster; POST only (an empty body is no AdmissionReview).
    "api:admission": (Drive("/api/v1/admission/{cluster}/", method="post"),),
    # MCP (JSON-RPC): POST, and Bearer tokens only, so every signed-in session of the walk is
    # refused alike; what a token's tools read is tests/api/test_mcp_http.py's, what the applying
    # tool writes (and for which tokens) tests/patches/test_mcp_apply.py's.
    "api:mcp": (Drive("/api/v1/mcp/", method="post"),),
    "api:sync-state-detail": (Drive("/api/v1/sync-states/{id}/", Names(apps.get_model("inventory", "SyncState"))),),
    "api:model-detail": (Drive("/api/v1/models/{id}/", MODELS),),
    "api:runtime-detail": (Drive("/api/v1/runtimes/{id}/", RUNTIMES),),
    "api:inference-service-detail": (Drive("/api/v1/inference-services/{id}/", ISVCS),),
    "api:matrix-build-detail": (Drive("/api/v1/matrix/builds/{id}/", Names(MatrixBuild)),),
    "api:cell-change-detail": (Drive("/api/v1/matrix/history/{id}/", Names(CellChange)),),
    "api:patch-audit-detail": (Drive("/api/v1/patches/audit/{id}/", Names(PatchAttempt)),),
    # A token is revoked by its owner or an administrator; it has no detail to GET.
    "api:api-token-detail": tuple(
        Drive("/api/v1/tokens/{id}/", Names(ApiToken), method=method) for method in ("get", "delete")
    ),
    "api:matrix-near-misses": (
        Drive("/api/v1/matrix/near-misses/?model={id}", MODELS),
        Drive(f"/api/v1/matrix/near-misses/?model={SHARED_MODEL}&runtime={{id}}", RUNTIMES),
    ),
    "api:matrix-cell": (
        Drive(f"/api/v1/matrix/cell/?model={{id}}&runtime={SHARED_RUNTIME}", MODELS),
        Drive(f"/api/v1/matrix/cell/?model={SHARED_MODEL}&runtime={{id}}", RUNTIMES),
        Drive(f"/api/v1/matrix/cell/?model={SHARED_MODEL}&runtime={SHARED_RUNTIME}&namespace={{ns}}"),
    ),
    "api:matrix-selection": (
        Drive("/api/v1/matrix/selection/?model={id}", MODELS),
        Drive(f"/api/v1/matrix/selection/?model={SHARED_MODEL}&namespace={{ns}}"),
    ),
    "api:matrix-cells": (*BY_QUERY, Drive(f"/api/v1/matrix/cells/?cluster={HOME}&model={{id}}", MODELS)),
    # Probes and metrics take no query: driven as they are called (what anonymous /readyz may
    # say is issue 19's other part; here it must name nothing a role may not read).
    "healthz": (Drive("/healthz"),),
    "readyz": (Drive("/readyz"),),
    "metrics": (Drive("/metrics"),),
    # Any other admin URL: the catch-all that sends to the admin's index or login.
    "admin/(?P<url>.*)$": (Drive("/admin/nowhere/"),),
    # The OpenAPI document answers the same to every query, and takes ~0.8 s to make.
    "schema": (Drive("/api/schema/"),),
    # Reset links carry a signed token for one user: any value is an invalid link, for everyone.
    "password_reset_confirm": (Drive("/accounts/reset/MQ/set-password/"),),
}
# The admin's object pages are driven from the model the URL name says (admin:<app>_<model>_<view>).
ADMIN_OBJECT = re.compile(r"^admin:(?P<app>[a-z_]+?)_(?P<model>[a-z]+)_(?P<view>change|delete|history)$")
# The admin's old object URLs, which redirect to the change page.
ADMIN_REDIRECT = re.compile(r"^admin/(?P<app>[a-z_]+)/(?P<model>[a-z]+)/<path:object_id>/$")
ADMIN_OTHER: dict[str, tuple[Drive, ...]] = {
    "admin:app_list": tuple(Drive(f"/admin/{app}/") for app in ("access", "auth", "inventory", "patches")),
    "admin:view_on_site": (Drive("/admin/r/1/{id}/", Names(Cluster)),),
    "admin:auth_user_password_change": (
        Drive("/admin/auth/user/{id}/password/", Names(apps.get_model("auth", "User"))),
    ),
}


@dataclass
class Tally:
    combinations: int = 0
    failures: list[str] = field(default_factory=list)


def walk(patterns: list[Any], prefix: str = "", namespace: str = "") -> Iterator[tuple[str, str, URLPattern]]:
    """(full name, route, pattern) of every pattern of the URLconf."""
    for item in patterns:
        if isinstance(item, URLResolver):
            inner = f"{namespace}:{item.namespace}" if namespace and item.namespace else item.namespace or namespace
            yield from walk(item.url_patterns, prefix + str(item.pattern), inner or "")
        else:
            name = f"{namespace}:{item.name}" if namespace and item.name else item.name or ""
            yield name or prefix + str(item.pattern), prefix + str(item.pattern), item


def _has_parameters(route: str) -> bool:
    return "<" in route or "(?P<" in route


def drives_of(name: str, route: str) -> tuple[Drive, ...] | None:
    """How the walk drives a pattern; None when it cannot and DRIVES does not say."""
    if name in DRIVES:
        return DRIVES[name]
    if name in ADMIN_OTHER:
        return ADMIN_OTHER[name]
    if match := ADMIN_OBJECT.match(name) or ADMIN_REDIRECT.match(route):
        model = apps.get_model(match["app"], match["model"])
        view = match.groupdict().get("view", "")
        url = f"/admin/{match['app']}/{match['model']}/{{id}}/{view}/".replace("/change/", "/").replace("//", "/")
        return (Drive(url, Names(model)),)
    if _has_parameters(route):
        return None
    path = "/" + route.replace("^", "").replace("$", "")
    if path.startswith("/admin/"):
        # The admin's own pages are for staff; their queries are Django lookups, not ours.
        return (Drive(path),)
    return tuple(Drive(path + drive.url) for drive in BY_QUERY)


@dataclass(frozen=True)
class Value:
    """One value of a sweep: its text in the request, and the (cluster, namespace) of what it
    names (None: nothing, it is a missing one)."""

    text: str
    tenancy: tuple[str, str] | None
    author: str = ""


def tenancy_of(names: Names, pk: int) -> tuple[tuple[str, str] | None, str]:
    rows = names.model._default_manager.filter(pk=pk)
    if names.kinds:
        rows = rows.filter(kind__in=names.kinds)
    tenancy: Tenancy | None = getattr(names.model, "TENANCY", None)
    if tenancy is None:  # the admin's other models: read by the superuser only; a token by its owner too
        owner = rows.values_list("user__username", flat=True).first() if names.model is ApiToken else ""
        return (("", "*") if rows.exists() else None), owner or ""
    fields = [tenancy.cluster, tenancy.namespace or tenancy.cluster]
    found = rows.values_list(*fields).first()
    if found is None:
        return None, ""
    author = rows.values_list("username", flat=True).first() if names.model is PatchAttempt else ""
    return (str(found[0]), str(found[1]) if tenancy.namespace else ""), author or ""


def every_id() -> list[int]:
    """Every primary key of every table that holds a cluster's data (the models with a TENANCY)."""
    tenant_models = [model for model in apps.get_models() if hasattr(model, "TENANCY")]
    return sorted({pk for model in tenant_models for pk in model._default_manager.values_list("pk", flat=True)})


def sweep(drive: Drive, ids: list[int]) -> tuple[list[Value], str]:
    """The values a template is driven with, and the missing value it is compared with."""
    if "{id}" in drive.url:
        assert drive.names is not None, drive.url
        if not hasattr(drive.names.model, "TENANCY"):  # the admin's other models: their own ids
            ids = list(drive.names.model._default_manager.values_list("pk", flat=True))
        values = [Value(str(pk), *tenancy_of(drive.names, pk)) for pk in ids]
        return [*values, Value(str(MISSING_ID), None)], str(MISSING_ID)
    if "{cluster}" in drive.url:
        return [Value(name, (name, "")) for name in CLUSTERS], MISSING_CLUSTER
    if "{ns}" in drive.url:
        return [Value(ns, (HOME, ns)) for ns in (*NAMESPACES[HOME], "_cluster")], MISSING_NAMESPACE
    return [Value("", (HOME, ""))], ""


def resolve_names(url: str) -> str:
    return re.sub(r"\{res:([\w-]+)\}", lambda m: str(Resource.objects.get(name=m[1]).pk), url)


def readable(role: RoleSpec, value: Value, usernames: dict[str, str]) -> bool:
    if value.tenancy is None:
        return False
    cluster, namespace = value.tenancy
    if namespace == "*":
        return role.superuser or bool(value.author and usernames.get(role.name) == value.author)
    if value.author and not role.superuser and usernames.get(role.name) != value.author:
        return False  # a patch record: its author's, and the audit log's
    return role.reads(cluster, "" if namespace == "_cluster" else namespace)


def carried(url: str) -> list[str]:
    """The values a request carries in its path and query, which its answer may repeat."""
    parts = urlsplit(url)
    return [part for part in parts.path.split("/") if part] + [value for _k, value in parse_qsl(parts.query)]


def seen_text(response: Any, url: str, asked: list[str]) -> str:
    """Status, headers (but cookies) and body, without what the request itself carried."""
    headers = "\n".join(f"{k}: {v}" for k, v in response.items() if k.lower() != "set-cookie")
    text = f"{response.status_code}\n{headers}\n{body_text(response)}"
    return normalized(text, [*asked, *carried(url)])


def failures_of(role: RoleSpec, url: str, response: Any, hidden_as: Any | None, asked: list[str]) -> list[str]:
    """What is wrong with one answer: a 5xx, a marker the role may not read, or, for an object
    the role may not read (`hidden_as`: the answer for a missing one), a different answer."""
    if response.status_code >= 500:
        return [f"{response.status_code}"]
    found = []
    text = seen_text(response, url, asked)
    if leaks := [marker for marker in role.forbidden() if marker in text]:
        found.append(f"shows {leaks}")
    if hidden_as is not None and (given := answer(response, asked)) != (missing := answer(hidden_as, asked)):
        first = next(
            (pair for pair in zip(given[1].splitlines(), missing[1].splitlines(), strict=False) if pair[0] != pair[1]),
            (),
        )
        found.append(f"answers unlike a missing one ({given[0]} vs {missing[0]}; first difference {first!r:.300})")
    return found


def check(
    tally: Tally, client: Client, role: RoleSpec, drive: Drive, usernames: dict[str, str], ids: list[int]
) -> None:
    """Drive one template for one role with every value of its sweep."""
    values, missing = sweep(drive, ids)
    template = resolve_names(drive.url)
    request = getattr(client, drive.method)
    absent = request(template.format(id=missing, cluster=missing, ns=missing)) if missing else None
    for value in values:
        url = template.format(id=value.text, cluster=value.text, ns=value.text)
        response = request(url)
        tally.combinations += 1
        hidden_as = None if readable(role, value, usernames) else absent
        for failure in failures_of(role, url, response, hidden_as, [value.text, missing, *carried(url)]):
            tally.failures.append(f"{role.name} {drive.method.upper()} {url}: {failure}")


@pytest.fixture
def production(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.API_ANONYMOUS_READ = False
    settings.DEBUG = False
    settings.MATRIX_UPDATE_ON_CHANGE = False
    # The walk asks a throttled page once per id per role: faster than its rate (a warm process),
    # it answered 429 where the missing id's 404 was expected. Rates are tests/security's subject.
    unlimited = dict.fromkeys(ScopedRateThrottle.THROTTLE_RATES)
    monkeypatch.setattr(ScopedRateThrottle, "THROTTLE_RATES", unlimited)


def clients(django_user_model: Any) -> tuple[dict[str, Client], dict[str, str]]:
    made, usernames = {}, {}
    for role in ROLES:
        client = Client(raise_request_exception=False)
        if role.signed_in:
            user = django_user_model.objects.create_user(f"user-{role.name}", is_superuser=role.superuser)
            if role.role is not None:
                Grant.objects.create(user=user, role=role.role, cluster=HOME, namespace=role.namespace)
            api_token_create(user, name="walk")
            client.force_login(user)
            usernames[role.name] = user.get_username()
        made[role.name] = client
    return made, usernames


def test_every_pattern_for_every_role_and_object_shows_only_what_the_role_reads(
    production: None, django_user_model: Any, tmp_path: Path
) -> None:
    made, usernames = clients(django_user_model)
    authors = {HOME_NS: "patcher-of-namespace"}
    build_world(tmp_path, lambda ns: django_user_model.objects.get(username=f"user-{authors.get(ns, 'superuser')}"))
    ids = every_id()
    rows = rows_per_tenant_model()
    assert [label for label, count in rows.items() if not count] == [], "the world holds no row of these"
    tally, undriven, patterns = Tally(), [], 0

    for name, route, _pattern in walk(get_resolver().url_patterns):
        drives = drives_of(name, route)
        if drives is None:
            undriven.append(f"{name} ({route})")
            continue
        patterns += 1
        started, before = time.monotonic(), tally.combinations
        for role, drive in itertools.product(ROLES, drives):
            check(tally, made[role.name], role, drive, usernames, ids)
        if PROFILE:
            print(f"{name}: {tally.combinations - before} in {time.monotonic() - started:.1f} s")

    print(f"\nworld rows: {sorted(rows.items())}")
    print(
        f"authorization matrix: {patterns} patterns x {len(ROLES)} roles, {len(ids)} ids: "
        f"{tally.combinations} (pattern, role, object) combinations"
    )
    for line in [*undriven, *tally.failures][:1000] if PROFILE else ():
        print(line)
    assert (undriven, tally.failures) == ([], []), "undriven: describe them in DRIVES; failures: fix the read"
