"""Registering a cluster from the add-cluster page: what an administrator may choose (a context
of a kubeconfig file of the kubeconfig directory, an Argo CD cluster Secret of the hub, a
manifest folder of settings.OME_MANIFEST_FOLDERS), the connection test shown before confirming,
and the registration itself, which is `inventory.services.cluster_register` as for the API, the
commands and OME_CLUSTERS.

Nothing here reads or shows a credential: kubeconfigs are listed by file and context name,
Secrets by name.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from . import kube
from .kube.argocd import cluster_secrets
from .kubeconfigs import KubeconfigInvalid, kubeconfig_dir, kubeconfig_read
from .models import Cluster, Kind
from .ome_release import detect
from .services import ClusterSpec, resolve_path
from .sources import read_manifests

logger = logging.getLogger(__name__)

Choice = tuple[str, str]
"""(value, label) of one option."""


@dataclass
class Choices:
    """What the page offers, per source; `problems` says what could not be listed and why."""

    kubeconfig: list[Choice] = field(default_factory=list)
    argocd: list[Choice] = field(default_factory=list)
    manifests: list[Choice] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def registration_choices() -> Choices:
    found = Choices()
    folder = kubeconfig_dir()
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if path.name.startswith(".") or not path.is_file():
            continue
        try:
            _, data = kubeconfig_read(path.name)
        except KubeconfigInvalid as error:
            found.problems.append(error.message)
            continue
        for context in data.get("contexts") or []:
            name = str(context.get("name") or "")
            found.kubeconfig.append((f"{path.name}#{name}", f"{path.name}: context {name}"))
    if settings.OME_ARGOCD_HUB:
        try:
            members = cluster_secrets(settings.OME_ARGOCD_NAMESPACE)
        except kube.KubeError as error:
            found.problems.append(f"Argo CD hub: {error.message}")
        else:
            found.argocd = [(m.secret, f"{m.name} ({m.server}), Secret {m.secret}") for m in members]
    found.manifests = [(folder, folder) for folder in settings.OME_MANIFEST_FOLDERS]
    return found


def spec_of(name: str, source: str, choice: str, offered: Choices) -> ClusterSpec:
    """The registration of `name` from one choice of `source` in `offered`; ValueError when the
    choice is not offered, a kubeconfig no longer defines the context, or the Secret has its
    cluster already."""
    if source == Cluster.Source.KUBECONFIG:
        path, _, context = choice.partition("#")
        kubeconfig_read(path, context)
        return ClusterSpec(name, source, kubeconfig=path, context=context)
    if source == Cluster.Source.ARGOCD and choice in dict(offered.argocd):
        # One cluster per Secret: discovery keeps the Secret's cluster named as Argo CD names it.
        registered = Cluster.objects.filter(argocd_secret=choice).first()
        if registered is not None:
            raise ValueError(f"The Secret {choice} is registered already, as cluster {registered.name}.")
        return ClusterSpec(name, source, argocd_secret=choice)
    if source == Cluster.Source.MANIFESTS and choice in dict(offered.manifests):
        return ClusterSpec(name, source, manifests=(resolve_path(choice),))
    raise ValueError(f"{choice!r} is not one of the offered {source} choices")


@dataclass(frozen=True)
class ConnectionTest:
    """What the page shows before confirming. `error`: the cluster could not be reached at all."""

    server_version: str = ""
    ome: str = ""
    kinds: dict[str, str | None] = field(default_factory=dict)
    error: str = ""
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.error


def connection_test(spec: ClusterSpec) -> ConnectionTest:
    """Read the cluster as a registration would, without storing anything."""
    if spec.source == Cluster.Source.MANIFESTS:
        snapshot = read_manifests([Path(path) for path in spec.manifests])
        kinds: dict[str, str | None] = dict.fromkeys(Kind.values)
        counts = ", ".join(f"{len(objects)} {kind}" for kind, objects in sorted(snapshot.objects.items()))
        ome = f"the newest profile (a snapshot has no OME to detect); {counts or 'no OME objects'}"
        return ConnectionTest("none (manifest files)", ome, kinds, notes=tuple(snapshot.errors))
    cluster = Cluster(
        name=spec.name,
        source=spec.source,
        kubeconfig=spec.kubeconfig,
        context=spec.context,
        argocd_secret=spec.argocd_secret,
    )
    try:
        api = kube.client_for(cluster)
    except kube.KubeError as error:
        return ConnectionTest(error=error.message)
    try:
        version, readable = kube.probe(api)
        found, problems = detect(api, settings.OME_NAMESPACE)
    except kube.KubeError as error:
        return ConnectionTest(error=error.message)
    finally:
        kube.close(api)
    ome = f"{found.version} ({found.evidence})" if found else "not detected: " + "; ".join(problems)
    return ConnectionTest(version, ome, readable)
