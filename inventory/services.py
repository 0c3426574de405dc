"""Registering clusters and loading manifest snapshots; the commands, tasks and API call these.

ClusterSpec (a registration) is defined with the sources (inventory.sources.base) and used from here."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.conf import settings

from access.scope import scope_for_user
from core.errors import DomainError

from .manifests import ManifestSnapshot, read_manifests
from .models import Cluster, Kind
from .ome_release import profile_for
from .sources import SOURCES, source_of
from .sources.base import ClusterSpec
from .sync import ApplyResult, record_list, snapshot_apply


def parse_cluster_setting(text: str) -> list[ClusterSpec]:
    """Parse OME_CLUSTERS: entries separated by `;` or new lines, each `NAME=SOURCE` in a source's
    syntax (`manifests:PATH[,PATH...]`, `kubeconfig:PATH[#CONTEXT]`, `in-cluster`; inventory.sources).
    `NAME@VERSION=...` also says which OME the cluster runs (a release tag such as v0.1.5, or
    a behaviour profile name); it wins over detection. Manifest paths are relative to the project
    folder; kubeconfig paths to the kubeconfig directory (settings.OME_KUBECONFIG_DIR), checked
    when the cluster is registered."""
    specs = []
    for raw in text.replace("\n", ";").split(";"):
        entry = raw.strip()
        if not entry:
            continue
        name, sep, source = entry.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"OME_CLUSTERS entry {entry!r}: expected NAME=SOURCE")
        name, _, ome_version = name.strip().partition("@")
        key, _, argument = source.strip().partition(":")
        named = SOURCES.get(key)
        spec = named.spec_from_setting(name, argument) if named and named.setting_syntax else None
        if spec is None:
            syntaxes = [source.setting_syntax for source in SOURCES.values() if source.setting_syntax]
            raise ValueError(f"OME_CLUSTERS entry {entry!r}: the source must be one of {', '.join(syntaxes)}")
        specs.append(dataclasses.replace(spec, ome_version=ome_version))
    return specs


class RegistrationInvalid(DomainError, ValueError):
    """A registration made through the web (API or admin) that cannot be accepted (400, or 403
    when it would leave its author without a role on the new cluster)."""

    code = "bad_registration"


class ClusterNameTaken(RegistrationInvalid):
    code = "unique"


class RegistrationLeavesNoRole(RegistrationInvalid):
    code = "no_role_on_cluster"
    http_status = 403


_NAME = re.compile(r"[-a-zA-Z0-9_]{1,63}")
WEB_SOURCE_HELP = "kubeconfig:FILE[#CONTEXT], FILE in the kubeconfig directory (OME_KUBECONFIG_DIR)."


def registration_check(name: str, *, author: Any) -> None:
    """What every registration made through the web (the API, the admin, the add-cluster page)
    checks of its name and author: a new slug name, and an author who will hold a role on the
    cluster (grants name clusters, so one can be made before the registration). Raises
    RegistrationInvalid naming the field."""
    _check_name(name)
    if Cluster.objects.filter(name=name).exists():
        raise ClusterNameTaken(f"A cluster named {name!r} already exists.", field="name")
    if not scope_for_user(author).reads_cluster(name):
        raise RegistrationLeavesNoRole(
            f"Registering cluster {name!r} would leave you without a role on it, so you could not see it: "
            f"ask an administrator for a role on cluster {name!r} first (a grant may name a cluster before "
            "it is registered).",
            field="name",
        )


def cluster_spec_from_web(name: str, source: str, *, author: Any) -> ClusterSpec:
    """The check of a registration made through the API or the admin: registration_check, and a
    kubeconfig of the kubeconfig directory (in-cluster and manifest folders come from the
    settings or the command line only: they read the server's own files and account). Raises
    RegistrationInvalid naming the field."""
    registration_check(name, author=author)
    if any(char in source for char in ";\r\n"):
        raise RegistrationInvalid("One source, on one line: a path, not a file's contents.", field="source")
    try:
        [spec] = parse_cluster_setting(f"{name}={source.strip()}")
    except ValueError:
        # The parser's message quotes the input; the input might hold a secret.
        raise RegistrationInvalid(f"Expected {WEB_SOURCE_HELP}", field="source") from None
    if not source_of(spec.source).api_registrable:
        raise RegistrationInvalid(
            "Only kubeconfig:FILE[#CONTEXT] can be registered here; in-cluster and manifest folders "
            "are registered from OME_CLUSTERS or `manage.py add_cluster`.",
            field="source",
        )
    source_of(spec.source).cluster_fields(spec)  # the source's own check, as at registration
    return spec


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise RegistrationInvalid(f"cluster name {name!r}: 1 to 63 letters, digits, `-` or `_`.", field="name")


def cluster_register(spec: ClusterSpec) -> Cluster:
    """Create the cluster, or update its source; idempotent. The source checks its part (a
    kubeconfig must be a file of the kubeconfig directory defining the context: KubeconfigInvalid
    else). An OME version in the spec is recorded as the administrator's (it wins over
    detection); without one, a version set earlier stays."""
    _check_name(spec.name)
    if spec.ome_version:
        profile_for(spec.ome_version)
    defaults: dict[str, object] = {"source": spec.source, **source_of(spec.source).cluster_fields(spec)}
    if spec.ome_version:
        defaults["ome_version_admin"] = spec.ome_version
    if spec.policy_reports is not None:
        defaults["policy_reports"] = spec.policy_reports
    cluster, _ = Cluster.objects.update_or_create(name=spec.name, defaults=defaults)
    return cluster


def clusters_register_from_settings() -> list[Cluster]:
    """OME_CLUSTERS' clusters; with OME_POLICY_REPORTS set, those it names write PolicyReports
    and the others do not."""
    specs = parse_cluster_setting(settings.OME_CLUSTERS)
    if settings.OME_POLICY_REPORTS:
        specs = [dataclasses.replace(spec, policy_reports=spec.name in settings.OME_POLICY_REPORTS) for spec in specs]
    return [cluster_register(spec) for spec in specs]


def manifests_load(
    cluster: Cluster, paths: Iterable[str | Path], *, prune: bool
) -> tuple[ApplyResult, ManifestSnapshot]:
    """Load manifest files and folders into a cluster's inventory, kind by kind."""
    snapshot = read_manifests(paths)
    result = ApplyResult()
    for kind in Kind.values:
        snapshot_apply(cluster, kind, snapshot.objects.get(kind, {}), prune=prune, paths=snapshot.paths, result=result)
        record_list(cluster, kind)
    return result, snapshot
