from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.models import Cluster
from inventory.services import ClusterSpec, cluster_register


class Command(BaseCommand):
    help = "Register a cluster: a kubeconfig context, the in-cluster service account, or manifest folders."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument(
            "--kubeconfig",
            metavar="PATH",
            help="a kubeconfig file inside the kubeconfig directory (OME_KUBECONFIG_DIR, default kubeconfigs/); "
            "a relative path starts from the current directory",
        )
        source.add_argument("--in-cluster", action="store_true")
        source.add_argument("--manifests", metavar="DIR", nargs="+")
        parser.add_argument("--context", default="", help="kubeconfig context (with --kubeconfig)")
        parser.add_argument(
            "--ome-version",
            default="",
            metavar="VERSION",
            help="the OME the cluster runs: a release tag (v0.1.5) or a behaviour profile name; wins over "
            "detection (manifest snapshots default to the newest profile)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["kubeconfig"]:
            # As any command line does: relative to where it runs (the directory check follows).
            kubeconfig = str(Path(options["kubeconfig"]).absolute())
            spec = ClusterSpec(options["name"], Cluster.Source.KUBECONFIG, kubeconfig, options["context"])
        elif options["in_cluster"]:
            spec = ClusterSpec(options["name"], Cluster.Source.IN_CLUSTER)
        else:
            spec = ClusterSpec(options["name"], Cluster.Source.MANIFESTS, manifests=tuple(options["manifests"]))
        spec = dataclasses.replace(spec, ome_version=options["ome_version"])
        try:
            cluster = cluster_register(spec)
        except (
            ValueError
        ) as error:  # a kubeconfig outside the directory, unreadable, no such context, or a bad --ome-version
            raise CommandError(str(error)) from None
        self.stdout.write(f"cluster {cluster.name}: {cluster.describe_source()}")
