"""The cluster the dashboard runs in, through its pod's service account."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .base import IN_CLUSTER, ClientConfig, ClusterSource, ClusterSpec

if TYPE_CHECKING:
    from ..models import Cluster


class InClusterSource(ClusterSource):
    key = "in-cluster"
    member = "IN_CLUSTER"
    label = "In Cluster"
    order = 40
    live = True
    command_noun = "the in-cluster service account"
    setting_syntax = "in-cluster"

    def describe(self, cluster: Cluster) -> str:
        return "in-cluster service account"

    def spec_from_setting(self, name: str, argument: str) -> ClusterSpec | None:
        return None if argument else ClusterSpec(name, self.key)

    def add_arguments(self, sources: argparse._MutuallyExclusiveGroup, parser: argparse.ArgumentParser) -> None:
        sources.add_argument("--in-cluster", action="store_true")

    def spec_from_options(self, name: str, options: dict[str, Any]) -> ClusterSpec | None:
        return ClusterSpec(name, self.key) if options["in_cluster"] else None

    def client_config(self, cluster: Cluster) -> ClientConfig:
        return IN_CLUSTER


SOURCE = InClusterSource()
