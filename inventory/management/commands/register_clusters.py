from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from inventory.services import clusters_register_from_settings


class Command(BaseCommand):
    help = "Register the clusters named by the OME_CLUSTERS setting (idempotent)."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            clusters = clusters_register_from_settings()
        except ValueError as error:
            raise CommandError(str(error)) from error
        for cluster in clusters:
            self.stdout.write(f"cluster {cluster.name}: {cluster.describe_source()}")
