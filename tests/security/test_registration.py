"""Cluster registration: kubeconfigs only from the configured directory (no traversal, `~`,
`:`-joined lists or symlinks out), only contexts the file defines, clear errors naming the file
for anything that is not a kubeconfig or too large; in-cluster and manifest folders never from
the API."""

from __future__ import annotations

import html
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission
from django.core.management import CommandError, call_command
from pytest_django import Settings

from inventory import kube
from inventory.models import Cluster
from tests.support.access import grant
from tests.support.kubeconfigs import write_kubeconfig

from .conftest import signed_in

pytestmark = pytest.mark.django_db


@pytest.fixture
def folder(tmp_path: Path, settings: Settings) -> Path:
    """The kubeconfig directory, with lab.yaml and prod.yaml (context prod); secret.yaml lies
    outside it."""
    inside = tmp_path / "kubeconfigs"
    inside.mkdir()
    settings.OME_KUBECONFIG_DIR = inside
    write_kubeconfig(inside / "lab.yaml", server="https://lab.example:6443", context="lab")
    write_kubeconfig(inside / "prod.yaml", server="https://prod.example:6443", context="prod")
    write_kubeconfig(tmp_path / "secret.yaml", context="x")
    return inside


def register(user: Any, source: str) -> Any:
    return signed_in(user).post("/api/v1/clusters/", {"name": "c", "source": source}, "application/json")


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("kubeconfig:../secret.yaml", "outside the kubeconfig directory"),
        ("kubeconfig:lab.yaml/../../secret.yaml", "outside the kubeconfig directory"),
        ("kubeconfig:/etc/passwd", "outside the kubeconfig directory"),
        ("kubeconfig:~/.kube/config", "`~` is not expanded"),
        ("kubeconfig:lab.yaml:prod.yaml#prod", "no `:`-joined lists"),
        ("kubeconfig:lab.yaml#prod", "defines no context 'prod'"),
        ("kubeconfig:missing.yaml", "cannot read it"),
        ("kubeconfig:.", "outside the kubeconfig directory"),
        ("in-cluster", "registered from OME_CLUSTERS or `manage.py add_cluster`"),
        ("manifests:/etc", "registered from OME_CLUSTERS or `manage.py add_cluster`"),
    ],
)
def test_the_api_refuses_every_kubeconfig_outside_the_rules(
    folder: Path, django_user_model: Any, source: str, message: str
) -> None:
    response = register(django_user_model.objects.create_superuser("root"), source)

    assert response.status_code == 400, response.content
    assert response.json()["field"] == "source"
    assert message in response.json()["detail"]
    assert not Cluster.objects.exists()


def test_a_symlink_out_of_the_directory_is_refused(folder: Path, django_user_model: Any) -> None:
    (folder / "link.yaml").symlink_to(folder.parent / "secret.yaml")

    response = register(django_user_model.objects.create_superuser("root"), "kubeconfig:link.yaml")

    assert response.status_code == 400
    assert "outside the kubeconfig directory" in response.json()["detail"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x00\x01binary", "is not valid YAML"),
        (b"just a string", "is not a kubeconfig"),
        (b"- a\n- list\n", "is not a kubeconfig"),
        (b"kind: Pod\nmetadata: {name: x}\n", "is not a kubeconfig"),
        (b"kind: Config\nclusters: {}\ncontexts: []\nusers: []\n", "`clusters` must be a list"),
        (b"a: &a [*a]\n", "is not a kubeconfig"),
    ],
)
def test_a_file_that_is_not_a_kubeconfig_gets_an_error_naming_it(
    folder: Path, django_user_model: Any, content: bytes, message: str
) -> None:
    (folder / "bad.yaml").write_bytes(content)

    response = register(django_user_model.objects.create_superuser("root"), "kubeconfig:bad.yaml")

    assert response.status_code == 400
    assert str(folder / "bad.yaml") in response.json()["detail"]
    assert message in response.json()["detail"]


def test_a_too_large_file_is_refused_naming_it(folder: Path, django_user_model: Any, settings: Settings) -> None:
    settings.OME_KUBECONFIG_MAX_BYTES = 1000
    (folder / "big.yaml").write_text("kind: Config\n# " + "x" * 2000)

    response = register(django_user_model.objects.create_superuser("root"), "kubeconfig:big.yaml")

    assert response.status_code == 400
    assert (
        f"kubeconfig {folder / 'big.yaml'} is larger than 1000 bytes (OME_KUBECONFIG_MAX_BYTES)"
        in response.json()["detail"]
    )


def test_a_file_replaced_after_registration_fails_the_sync_clearly_instead_of_crashing(
    folder: Path, django_user_model: Any
) -> None:
    assert register(django_user_model.objects.create_superuser("root"), "kubeconfig:prod.yaml#prod").status_code == 201
    (folder / "prod.yaml").write_text("not: a kubeconfig\n")

    with pytest.raises(kube.KubeConfigError) as caught:
        kube.client_for(Cluster.objects.get(name="c"))

    assert caught.value.message == f"{folder / 'prod.yaml'} is not a kubeconfig: `clusters` must be a list of entries"


def test_settings_and_the_command_line_follow_the_same_rules(folder: Path, settings: Settings) -> None:
    settings.OME_CLUSTERS = "x=kubeconfig:lab.yaml:prod.yaml#prod"

    with pytest.raises(CommandError, match="no `:`-joined lists"):
        call_command("register_clusters", stdout=StringIO())


def test_the_command_line_reads_a_kubeconfig_path_from_the_current_directory_as_a_shell_user_expects(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(folder.parent)

    call_command("add_cluster", "z", "--kubeconfig", "kubeconfigs/prod.yaml", "--context", "prod", stdout=StringIO())
    with pytest.raises(CommandError) as outside:
        call_command("add_cluster", "y", "--kubeconfig", "secret.yaml", stdout=StringIO())

    assert Cluster.objects.get(name="z").kubeconfig == str(folder / "prod.yaml")
    assert str(outside.value) == (
        f"kubeconfig {str(folder.parent / 'secret.yaml')!r} is outside the kubeconfig directory {folder} "
        "(OME_KUBECONFIG_DIR)"
    )


def staff_who_may_add_clusters(django_user_model: Any) -> Any:
    user = django_user_model.objects.create_user("staff", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="add_cluster", content_type__app_label="inventory"))
    grant(user, "admin", cluster="c")
    return user


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("in-cluster", "registered from OME_CLUSTERS or `manage.py add_cluster`"),
        ("manifests:/etc", "registered from OME_CLUSTERS or `manage.py add_cluster`"),
        ("kubeconfig:/etc/passwd", "outside the kubeconfig directory"),
    ],
)
def test_the_admin_refuses_what_the_api_refuses_with_the_same_words(
    folder: Path, django_user_model: Any, source: str, message: str
) -> None:
    client = signed_in(staff_who_may_add_clusters(django_user_model))

    response = client.post("/admin/inventory/cluster/add/", {"name": "c", "source": source})

    assert response.status_code == 200
    assert message in html.unescape(response.content.decode())
    assert not Cluster.objects.exists()


def test_the_admin_registers_a_kubeconfig_of_the_directory(folder: Path, django_user_model: Any) -> None:
    client = signed_in(staff_who_may_add_clusters(django_user_model))

    response = client.post("/admin/inventory/cluster/add/", {"name": "c", "source": "kubeconfig:prod.yaml#prod"})

    assert response.status_code == 302, response.content
    stored = Cluster.objects.get(name="c")
    assert (stored.source, stored.kubeconfig, stored.context) == ("kubeconfig", str(folder / "prod.yaml"), "prod")


def test_a_registration_that_would_leave_its_author_without_a_role_is_refused_and_creates_nothing(
    folder: Path, django_user_model: Any
) -> None:
    author = django_user_model.objects.create_user("carol")
    author.user_permissions.add(Permission.objects.get(codename="add_cluster", content_type__app_label="inventory"))
    grant(author, "admin", cluster="other")

    response = register(author, "kubeconfig:prod.yaml#prod")

    assert response.status_code == 403, response.content
    assert response.json()["code"] == "no_role_on_cluster"
    assert "would leave you without a role on it" in response.json()["detail"]
    assert not Cluster.objects.exists()
    grant(author, "viewer", cluster="c")
    assert register(author, "kubeconfig:prod.yaml#prod").status_code == 201


def test_every_door_refuses_a_cluster_name_that_is_not_a_slug(folder: Path, settings: Settings) -> None:
    settings.OME_CLUSTERS = "a/b=kubeconfig:prod.yaml#prod"

    with pytest.raises(CommandError, match="cluster name 'a/b': 1 to 63 letters"):
        call_command("register_clusters", stdout=StringIO())
    with pytest.raises(CommandError, match="cluster name 'x y': 1 to 63 letters"):
        call_command("add_cluster", "x y", "--kubeconfig", "prod.yaml", "--context", "prod", stdout=StringIO())
    assert not Cluster.objects.exists()
