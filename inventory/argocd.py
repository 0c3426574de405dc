"""Clusters registered in Argo CD: one Cluster per cluster Secret of the hub (settings.
OME_ARGOCD_HUB, namespace OME_ARGOCD_NAMESPACE), added, renamed and removed as the Secrets are.

Only the Secret's NAMESPACE/NAME is stored (`Cluster.argocd_secret`); its credentials are read
from the hub each time a client is built (inventory.kube.argocd) and never stored or shown. A
cluster registered otherwise (OME_CLUSTERS, the admin, the API) is never taken over: a Secret
whose name is taken is reported and skipped.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.utils.text import slugify

from .kube.argocd import ArgoCluster, cluster_secrets
from .models import Cluster
from .services import ClusterSpec, cluster_register
from .sources.argocd import ArgoCDSource

logger = logging.getLogger(__name__)


@dataclass
class Discovery:
    """What one pass over the hub's cluster Secrets changed."""

    added: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def cluster_name(member: ArgoCluster) -> str:
    """The dashboard's name of a member: its Argo CD name as a slug (at most 63 characters)."""
    return (slugify(member.name) or slugify(member.secret.replace("/", "-")))[:63].strip("-")


def argocd_clusters_sync() -> Discovery:
    """Register a cluster per cluster Secret of the hub, and delete the Argo CD clusters whose
    Secret is gone. KubeError when the hub cannot be read (then nothing changes)."""
    members = cluster_secrets(settings.OME_ARGOCD_NAMESPACE)
    found = Discovery()
    with transaction.atomic():
        registered = {c.argocd_secret: c for c in Cluster.objects.filter(source=ArgoCDSource.key)}
        for member in members:
            name = cluster_name(member)
            taken = Cluster.objects.filter(name=name).exclude(argocd_secret=member.secret).exists()
            if taken or name in found.added + found.kept:
                found.skipped.append(f"{member.secret}: the name {name!r} is taken by another cluster")
                continue
            previous = registered.get(member.secret)
            if previous is not None and previous.name != name:
                previous.name = name
                previous.save(update_fields=["name"])
            cluster_register(ClusterSpec(name, ArgoCDSource.key, argocd_secret=member.secret))
            (found.kept if previous is not None else found.added).append(name)
        listed = {member.secret for member in members}
        for secret, cluster in registered.items():
            if secret not in listed:
                found.removed.append(cluster.name)
                cluster.delete()
    for problem in found.skipped:
        logger.warning("Argo CD cluster %s", problem)
    return found
