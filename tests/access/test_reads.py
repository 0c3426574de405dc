"""The unscoped-read check (scripts/check_reads.py, also run by `make lint`): the project has no
direct read of a tenant's rows outside the read path and its allow-list, the check finds each
kind of direct read, and every model that holds a cluster's data is one it knows."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from django.apps import apps
from django.db import models

from access.restrict import RestrictedQuerySet, Tenancy
from inventory.models import Cluster

ROOT = Path(__file__).resolve().parents[2]


def _load_check() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_reads", ROOT / "scripts" / "check_reads.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


check_reads = _load_check()
MODELS, RELATED = check_reads.tenant_models(check_reads.python_files())


def test_no_read_of_a_tenants_rows_bypasses_the_read_path_and_no_allowance_is_stale() -> None:
    unscoped, stale = check_reads.check()

    allowed = len(check_reads.every_read()) - len(unscoped)
    print(
        f"\nunscoped-read check: {len(MODELS)} tenant-bearing models, {allowed} allowed reads, {len(unscoped)} others"
    )
    assert [str(finding) for finding in unscoped] == []
    assert stale == []


def test_every_allowance_says_why() -> None:
    assert all(len(reason.split()) >= 4 for reason in check_reads.ALLOWED.values())


def test_every_allowance_names_a_function_not_a_whole_module() -> None:
    """A module serves readers one function at a time: allowing it whole let every new function
    of it read unscoped (issue 32: six such modules also served readers)."""
    assert [key for key in check_reads.ALLOWED if ":" not in key] == []


@pytest.mark.parametrize(
    "path",
    [
        "lint/selectors.py",
        "web/pages/matrix.py",
        "web/api/policies.py",
        "web/api/matrix/cells.py",
        "x/templatetags/t.py",
    ],
)
def test_derived_data_read_for_no_reader_is_found_where_readers_are_answered(path: str) -> None:
    source = "def v(request, cluster):\n    return load_inventory(cluster), f(scope=SYSTEM)\n"

    found = check_reads.check_source(path, source, MODELS, RELATED)

    assert [finding.text.split(":")[0] for finding in found] == ["load_inventory(...)", "SYSTEM"]


def test_derived_data_read_for_the_system_elsewhere_is_not_a_readers_read() -> None:
    source = "from access.scope import SYSTEM\ndef t(cluster):\n    return load_inventory(cluster), f(SYSTEM)\n"

    assert check_reads.check_source("matrix/services.py", source, MODELS, RELATED) == []


VIEW_SOURCES = {
    "manager": ("def v(request):\n    return Resource.objects.filter(pk=1)\n", "Resource.objects.filter"),
    "manager all": ("def v(request):\n    return list(MatrixRow.objects.all())\n", "MatrixRow.objects.all"),
    "manager passed on": ("def v(request):\n    return render(Cluster.objects)\n", "Cluster.objects"),
    "get_object_or_404": (
        "def v(request, pk):\n    return get_object_or_404(PatchAttempt, pk=pk)\n",
        "get_object_or_404",
    ),
    "related manager": ("def v(cluster):\n    return cluster.resources.filter(kind='x')\n", ".resources.filter"),
    "serializer field": (
        "class S:\n    model = PrimaryKeyRelatedField(queryset=Resource.objects.filter(kind='BaseModel'))\n",
        "Resource.objects.filter",
    ),
}


@pytest.mark.parametrize(("source", "expected"), VIEW_SOURCES.values(), ids=VIEW_SOURCES.keys())
def test_the_check_finds_a_direct_read(source: str, expected: str) -> None:
    found = check_reads.check_source("somewhere/views.py", source, MODELS, RELATED)

    assert len(found) == 1
    assert expected in found[0].text
    assert found[0].allowed_by(check_reads.ALLOWED) is None


def test_the_check_lets_the_read_path_and_writes_through() -> None:
    source = (
        "def v(request, scope):\n"
        "    Resource.objects.restrict(scope, Action.VIEW).filter(pk=1)\n"
        "    PatchAttempt.objects.create(username='x')\n"
        "    self.rows.filter(pk=1)\n"
        "    return get_object_or_404(resources_visible(scope), pk=1)\n"
    )

    assert check_reads.check_source("somewhere/views.py", source, MODELS, RELATED) == []


def test_the_check_finds_a_related_manager_in_a_template() -> None:
    found = check_reads.check_template("templates/x.html", "<p>\n{{ cluster.resources.count }}</p>", RELATED)

    assert [(finding.line, finding.text.split(":")[0]) for finding in found] == [(2, ".resources.count")]


def test_an_allowance_of_a_function_covers_that_function_only() -> None:
    inside = check_reads.Finding("matrix/cells.py", 1, "x", "runtimes_in_scope")
    beside = check_reads.Finding("matrix/cells.py", 1, "x", "row_cells")

    assert inside.allowed_by(check_reads.ALLOWED) == "matrix/cells.py:runtimes_in_scope"
    assert beside.allowed_by(check_reads.ALLOWED) is None


def _holds_a_cluster(model: type[models.Model]) -> bool:
    return (
        any(
            (field.is_relation and field.related_model is Cluster) or field.name in ("cluster", "cluster_name")
            for field in model._meta.get_fields()
            if not field.auto_created
        )
        or model is Cluster
    )


# Models that name a cluster without holding its data, and why.
NOT_TENANT_DATA = {
    "access.Grant": "gives a user rights on a cluster or namespace; read by access.scope, shown in the admin",
    "access.Delegation": "says which clusters decide patches by their own RBAC; an administrator's setting",
}


@pytest.mark.parametrize(
    "model",
    [m for m in apps.get_models() if _holds_a_cluster(m) and m._meta.label not in NOT_TENANT_DATA],
    ids=lambda m: m._meta.label,
)
def test_every_model_that_holds_a_clusters_data_is_restricted_by_construction(model: type[models.Model]) -> None:
    assert isinstance(getattr(model, "TENANCY", None), Tenancy)
    assert isinstance(model._default_manager.all(), RestrictedQuerySet)
    assert model.__name__ in MODELS
