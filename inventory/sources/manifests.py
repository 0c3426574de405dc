"""A snapshot of manifest files and folders (settings.OME_MANIFEST_FOLDERS on the add-cluster
page), loaded on request, never watched."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from .base import ClusterSource, ClusterSpec, Offer

if TYPE_CHECKING:
    from ..models import Cluster


def resolve_path(text: str) -> str:
    """A manifest path: relative to the project folder, or absolute."""
    path = Path(text).expanduser()
    return str(path if path.is_absolute() else Path(settings.BASE_DIR) / path)


class ManifestsSource(ClusterSource):
    key = "manifests"
    member = "MANIFESTS"
    label = "Manifests"
    order = 30
    live = False
    command_noun = "manifest folders"
    page_label = "A manifest folder"
    field_label = "Manifest folder"
    setting_syntax = "manifests:PATH[,PATH...]"

    def describe(self, cluster: Cluster) -> str:
        return "manifests: " + ", ".join(cluster.manifests)

    def offer(self) -> Offer:
        return Offer(choices=[(folder, folder) for folder in settings.OME_MANIFEST_FOLDERS])

    def spec_from_page(self, name: str, value: str, offer: Offer) -> ClusterSpec:
        if value not in dict(offer.choices):
            return super().spec_from_page(name, value, offer)
        return ClusterSpec(name, self.key, manifests=(resolve_path(value),))

    def spec_from_setting(self, name: str, argument: str) -> ClusterSpec | None:
        if not argument:
            return None
        return ClusterSpec(name, self.key, manifests=tuple(resolve_path(p) for p in argument.split(",") if p.strip()))

    def add_arguments(self, sources: argparse._MutuallyExclusiveGroup, parser: argparse.ArgumentParser) -> None:
        sources.add_argument("--manifests", metavar="DIR", nargs="+")

    def spec_from_options(self, name: str, options: dict[str, Any]) -> ClusterSpec | None:
        return ClusterSpec(name, self.key, manifests=tuple(options["manifests"])) if options["manifests"] else None

    def snapshot_paths(self, cluster: Cluster) -> list[str]:
        return list(cluster.manifests)


SOURCE = ManifestsSource()
