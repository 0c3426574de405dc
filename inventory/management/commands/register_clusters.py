from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.live.resync import cluster_resync
from inventory.services import clusters_register_from_settings


class Command(BaseCommand):
    help = "Register the clusters named by the OME_CLUSTERS setting (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--sync", action="store_true", help="then sync each cluster once (errors are recorded, not fatal)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            clusters = clusters_register_from_settings()
        except ValueError as error:
            raise CommandError(str(error)) from error
        for cluster in clusters:
            self.stdout.write(f"cluster {cluster.name}: {cluster.describe_source()}")
            if options["sync"]:
                result = cluster_resync(cluster)
                problems = len(result.errors) + len(result.manifest_errors)
                self.stdout.write(f"  synced{f' with {problems} problems (see the sync page)' if problems else ''}")
