"""The cluster sources, one module each (see base.py for what a source declares).

SOURCES is the one list: Cluster.Source and the model field's choices, the add-cluster page,
the `add_cluster` command, OME_CLUSTERS and the clients all derive from it. Adding a source is
a module here and its line below. The order is the page's and the choices'.
"""

from __future__ import annotations

from functools import cache

from django.db import models

from .argocd import ArgoCDSource
from .base import ClusterSource
from .in_cluster import InClusterSource
from .kubeconfig import KubeconfigSource
from .manifests import ManifestsSource

SOURCES: dict[str, ClusterSource] = {
    source.key: source for source in (KubeconfigSource(), ArgoCDSource(), ManifestsSource(), InClusterSource())
}


def source_of(key: str) -> ClusterSource:
    try:
        return SOURCES[key]
    except KeyError:
        raise LookupError(f"cluster source {key!r} is not one of inventory.sources.SOURCES") from None


def source_choices() -> list[tuple[str, str]]:
    return [(source.key, source.label) for source in SOURCES.values()]


def live_source_keys() -> list[str]:
    return [source.key for source in SOURCES.values() if source.live]


def source_enum() -> type[models.TextChoices]:
    """Cluster.Source: the sources as TextChoices (Cluster.Source.KUBECONFIG == "kubeconfig")."""
    return _enum(tuple((source.member, source.key, source.label) for source in SOURCES.values()))


@cache
def _enum(members: tuple[tuple[str, str, str], ...]) -> type[models.TextChoices]:
    return models.TextChoices("Source", [(member, (key, label)) for member, key, label in members])  # type: ignore[call-overload]
