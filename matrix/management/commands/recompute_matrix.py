from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.scope import SYSTEM
from inventory.models import Cluster
from inventory.selectors import ClusterChoiceError, cluster_choose
from matrix.services import matrix_rebuild


class Command(BaseCommand):
    help = "Recompute the whole compatibility matrix of a cluster (all clusters with --all)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", help="cluster name; defaults to the only cluster")
        parser.add_argument("--all", action="store_true", help="every registered cluster")
        parser.add_argument("--chunk-size", type=int, help="models per chunk")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            clusters = (
                list(Cluster.objects.all())
                if options["all"]
                else [cluster_choose(options["cluster"], default="only", scope=SYSTEM)]
            )
        except ClusterChoiceError as error:
            raise CommandError(str(error)) from error
        for cluster in clusters:
            build = matrix_rebuild(cluster, chunk_size=options["chunk_size"])
            self.stdout.write(
                f"{cluster.name}: {build.models_count} models x {build.runtimes_count} runtimes, "
                f"{build.rows_count} rows in {build.duration_ms} ms ({build.ome_behaviour})"
            )
