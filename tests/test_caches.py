"""Every in-process cache is bounded, and its bound is a setting (settings.CACHE_ENTRIES)."""

from __future__ import annotations

import gc
import importlib
import os
import pkgutil
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import override_settings

import matching
from core.cache import VersionedCache, query_key
from matrix.models import MatrixRow
from tests.support.apps import project_packages

APPS = [package for package in project_packages() if package not in ("ome_dashboard", "matching")]


def project_caches() -> list[VersionedCache[object, object]]:
    for app in APPS:
        package = importlib.import_module(app)
        for module in pkgutil.walk_packages(package.__path__, f"{app}."):
            if ".migrations" not in module.name and ".management" not in module.name:
                importlib.import_module(module.name)
    importlib.import_module("ome_dashboard.ops.metrics")
    # type(), not isinstance(): the latter would evaluate lazy objects (a request's CSP nonce).
    return [item for item in gc.get_objects() if type(item) is VersionedCache]


def test_every_cache_of_the_project_has_its_bound_in_settings() -> None:
    caches = project_caches()

    # ... and every bound in settings bounds a cache (the grids' texts and Django's cache apart).
    assert {cache.name for cache in caches} == set(settings.CACHE_ENTRIES) - {"grid_texts", "django_cache"}
    assert all(cache.bound >= 1 for cache in caches)


def test_a_cache_holds_at_most_its_bound_dropping_the_least_recently_used() -> None:
    cache: VersionedCache[int, str] = VersionedCache("cell_pages")
    with override_settings(CACHE_ENTRIES={**settings.CACHE_ENTRIES, "cell_pages": 2}):
        for owner in (1, 2):
            cache.get(owner, 1, lambda _stale, owner=owner: f"page {owner}")
        assert cache.peek(1, 1) == "page 1"  # 1 is now more recent than 2
        cache.get(3, 1, lambda _stale: "page 3")

        assert [cache.peek(owner, 1) is not None for owner in (1, 2, 3)] == [True, False, True]


def test_the_grids_and_the_django_cache_take_their_bounds_from_settings() -> None:
    assert matching.Grid.text_memo_entries == settings.CACHE_ENTRIES["grid_texts"]
    if settings.CACHES["default"]["BACKEND"].endswith("LocMemCache"):
        assert cache._max_entries == settings.CACHE_ENTRIES["django_cache"]  # type: ignore[attr-defined]


SHOW_BOUNDS = (
    "from ome_dashboard import settings as s; print(s.CACHE_ENTRIES['cell_pages'], s.CACHE_ENTRIES['grid_texts'])"
)


def bounds(value: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "ENV_FILE": "", "DEBUG": "true", "CACHE_ENTRIES": value}
    return subprocess.run(
        [sys.executable, "-c", SHOW_BOUNDS], cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=60
    )


def test_cache_entries_overrides_the_named_bounds() -> None:
    result = bounds("cell_pages=12, grid_texts=3000")

    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["12", "3000"]


@pytest.mark.parametrize("value", ["cell_page=12", "cell_pages=0", "cell_pages=many", "cell_pages"])
def test_a_wrong_cache_bound_stops_the_process_naming_it(value: str) -> None:
    result = bounds(value)

    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert f"CACHE_ENTRIES: {value!r} must be NAME=N" in result.stderr


@pytest.mark.django_db
def test_a_query_key_is_equal_for_equal_queries_and_tells_long_json_values_apart() -> None:
    long = [["serving-runtime-with-a-long-name", str(n)] for n in range(3)]
    keys = [query_key(MatrixRow.objects.filter(manual=value)) for value in ([], [], long, long[:2])]

    assert keys[0] == keys[1]
    assert hash(keys[0]) == hash(keys[1])
    assert keys[2] != keys[3]
    assert query_key(MatrixRow.objects.filter(pk__in=[])) is None
