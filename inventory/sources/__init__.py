"""The cluster sources, one module each (see base.py for what a source declares).

Every module of this package that declares `SOURCE` (a ClusterSource) is a source: SOURCES
finds them, in the order their `order` says. Cluster.Source and the model field's choices, the
add-cluster page, the `add_cluster` command (its options and help), OME_CLUSTERS and the
clients all derive from it. Adding a source is a module here, nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from django.db import models

from .base import ClusterSource


def discovered(package: str) -> dict[str, ClusterSource]:
    """The sources the modules of `package` declare, by key, in their order."""
    found = []
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__, f"{package}."):
        source = getattr(importlib.import_module(module.name), "SOURCE", None)
        if isinstance(source, ClusterSource):
            found.append(source)
    return {source.key: source for source in sorted(found, key=lambda source: (source.order, source.key))}


SOURCES: dict[str, ClusterSource] = discovered(__name__)


def source_of(key: str) -> ClusterSource:
    try:
        return SOURCES[key]
    except KeyError:
        raise LookupError(f"cluster source {key!r} is not one of inventory.sources.SOURCES") from None


def source_choices() -> list[tuple[str, str]]:
    return [(source.key, source.label) for source in SOURCES.values()]


def live_source_keys() -> list[str]:
    return [source.key for source in SOURCES.values() if source.live]


def command_nouns() -> str:
    """What the `add_cluster` command registers, in words ("a kubeconfig context, ... or ...")."""
    nouns = [source.command_noun for source in SOURCES.values() if source.command_noun]
    return ", ".join(nouns[:-1]) + (" or " if len(nouns) > 1 else "") + nouns[-1]


def source_enum() -> type[models.TextChoices]:
    """Cluster.Source: the sources as TextChoices (Cluster.Source.KUBECONFIG == "kubeconfig")."""
    return _enum(tuple((source.member, source.key, source.label) for source in SOURCES.values()))


@cache
def _enum(members: tuple[tuple[str, str, str], ...]) -> type[models.TextChoices]:
    return models.TextChoices("Source", [(member, (key, label)) for member, key, label in members])  # type: ignore[call-overload]
