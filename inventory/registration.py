"""Registering a cluster from the add-cluster page: what an administrator may choose (each
source's offer, inventory.sources: a context of a kubeconfig file of the kubeconfig directory,
an Argo CD cluster Secret of the hub, a manifest folder of settings.OME_MANIFEST_FOLDERS), the
connection test shown before confirming, and the registration itself, which is
`inventory.services.cluster_register` as for the API, the commands and OME_CLUSTERS.

Nothing here reads or shows a credential: kubeconfigs are listed by file and context name,
Secrets by name.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from . import kube
from .manifests import read_manifests
from .models import Cluster, Kind
from .ome_release import detect
from .sources import SOURCES, source_of
from .sources.base import ClusterSource, ClusterSpec, Offer

logger = logging.getLogger(__name__)


@dataclass
class Choices:
    """What the page offers: per source key, its offer (inventory.sources.base.Offer)."""

    offers: dict[str, Offer] = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        """What could not be listed, and why."""
        return [problem for offer in self.offers.values() for problem in offer.problems]


def registration_choices() -> Choices:
    return Choices({source.key: source.offer() for source in page_sources()})


def page_sources() -> list[ClusterSource]:
    """The sources the add-cluster page offers, in order."""
    return [source for source in SOURCES.values() if source.page_label]


def spec_of(name: str, source: str, choice: str, offered: Choices) -> ClusterSpec:
    """The registration of `name` from one choice of `source` in `offered`; ValueError (or
    KubeconfigInvalid) when the source refuses it: the choice is not offered, a kubeconfig no
    longer defines the context, the Secret has its cluster already, ..."""
    return source_of(source).spec_from_page(name, choice, offered.offers.get(source, Offer()))


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
    cluster = Cluster(
        name=spec.name,
        source=spec.source,
        kubeconfig=spec.kubeconfig,
        context=spec.context,
        manifests=list(spec.manifests),
        argocd_secret=spec.argocd_secret,
    )
    if not cluster.is_live:
        snapshot = read_manifests([Path(path) for path in cluster.registered_source.snapshot_paths(cluster)])
        kinds: dict[str, str | None] = dict.fromkeys(Kind.values)
        counts = ", ".join(f"{len(objects)} {kind}" for kind, objects in sorted(snapshot.objects.items()))
        ome = f"the newest profile (a snapshot has no OME to detect); {counts or 'no OME objects'}"
        return ConnectionTest("none (manifest files)", ome, kinds, notes=tuple(snapshot.errors))
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
