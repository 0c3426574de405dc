"""Registering clusters and loading manifest snapshots; the commands, tasks and API call these."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from django.conf import settings

from access.scope import scope_for_user
from core.errors import DomainError

from .kubeconfigs import kubeconfig_read
from .models import Cluster, Kind
from .ome_release import profile_for
from .sources import ManifestSnapshot, read_manifests
from .sync import ApplyResult, record_list, snapshot_apply


@dataclass(frozen=True)
class ClusterSpec:
    name: str
    source: str
    kubeconfig: str = ""
    context: str = ""
    manifests: tuple[str, ...] = ()
    argocd_secret: str = ""
    """NAMESPACE/NAME of the Argo CD cluster Secret (inventory.argocd registers these)."""
    ome_version: str = ""
    """The OME the cluster runs (a release tag or a profile name), if the registration says."""
    policy_reports: bool | None = None
    """Whether the cluster gets its findings as PolicyReports (docs/reports.md); None: as it was."""


def resolve_path(text: str) -> str:
    """A manifest path: relative to the project folder, or absolute."""
    path = Path(text).expanduser()
    return str(path if path.is_absolute() else Path(settings.BASE_DIR) / path)


def parse_cluster_setting(text: str) -> list[ClusterSpec]:
    """Parse OME_CLUSTERS: entries separated by `;` or new lines, each one of
    `NAME=manifests:PATH[,PATH...]`, `NAME=kubeconfig:PATH[#CONTEXT]` or `NAME=in-cluster`.
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
        source = source.strip()
        kind, _, argument = source.partition(":")
        if kind == Cluster.Source.IN_CLUSTER and not argument:
            specs.append(ClusterSpec(name, kind, ome_version=ome_version))
        elif kind == Cluster.Source.MANIFESTS and argument:
            paths = tuple(resolve_path(part) for part in argument.split(",") if part.strip())
            specs.append(ClusterSpec(name, kind, manifests=paths, ome_version=ome_version))
        elif kind == Cluster.Source.KUBECONFIG and argument:
            path, _, context = argument.partition("#")
            specs.append(
                ClusterSpec(name, kind, kubeconfig=path.strip(), context=context.strip(), ome_version=ome_version)
            )
        else:
            raise ValueError(
                f"OME_CLUSTERS entry {entry!r}: the source must be manifests:PATH, kubeconfig:PATH[#CONTEXT] or in-cluster"
            )
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
    if spec.source != Cluster.Source.KUBECONFIG:
        raise RegistrationInvalid(
            "Only kubeconfig:FILE[#CONTEXT] can be registered here; in-cluster and manifest folders "
            "are registered from OME_CLUSTERS or `manage.py add_cluster`.",
            field="source",
        )
    kubeconfig_read(spec.kubeconfig, spec.context)
    return spec


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name):
        raise RegistrationInvalid(f"cluster name {name!r}: 1 to 63 letters, digits, `-` or `_`.", field="name")


def cluster_register(spec: ClusterSpec) -> Cluster:
    """Create the cluster, or update its source; idempotent. A kubeconfig must be a file of the
    kubeconfig directory defining the context (inventory.kubeconfigs): KubeconfigInvalid else.
    An OME version in the spec is recorded as the administrator's (it wins over detection);
    without one, a version set earlier stays."""
    _check_name(spec.name)
    if spec.ome_version:
        profile_for(spec.ome_version)
    kubeconfig = ""
    if spec.source == Cluster.Source.KUBECONFIG:
        path, _ = kubeconfig_read(spec.kubeconfig, spec.context)
        kubeconfig = str(path)
    defaults: dict[str, object] = {
        "source": spec.source,
        "kubeconfig": kubeconfig,
        "context": spec.context,
        "manifests": list(spec.manifests),
        "argocd_secret": spec.argocd_secret,
    }
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
        specs = [replace(spec, policy_reports=spec.name in settings.OME_POLICY_REPORTS) for spec in specs]
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
