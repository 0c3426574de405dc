from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.argocd import argocd_clusters_sync
from inventory.kube import KubeError
from inventory.live.resync import cluster_resync
from inventory.models import Cluster, Kind
from inventory.services import clusters_register_from_settings
from inventory.sources.argocd import ArgoCDSource
from inventory.sync import record_error

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = "Register the clusters named by the OME_CLUSTERS setting, and Argo CD's when OME_ARGOCD_HUB is set (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--sync", action="store_true", help="then sync each cluster once (errors are recorded, not fatal)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            clusters = clusters_register_from_settings()
        except ValueError as error:
            raise CommandError(str(error)) from error
        if settings.OME_ARGOCD_HUB:
            clusters += self._argocd()
        for cluster in clusters:
            self.stdout.write(f"cluster {cluster.name}: {cluster.describe_source()}")
            if options["sync"]:
                self._sync(cluster)

    def _argocd(self) -> list[Cluster]:
        """Argo CD's clusters; a hub that cannot be read is reported, not fatal (beat retries)."""
        try:
            found = argocd_clusters_sync()
        except KubeError as error:
            self.stdout.write(f"Argo CD hub {settings.OME_ARGOCD_HUB}: not read: {error.message}")
            return []
        for problem in found.skipped:
            self.stdout.write(f"Argo CD cluster {problem}")
        return list(Cluster.objects.filter(source=ArgoCDSource.key))

    def _sync(self, cluster: Cluster) -> None:
        """Sync once. This runs before the long-running processes start (compose's one-shot
        step), so nothing a cluster holds may stop it: a failure is logged and recorded, and
        the next cluster goes on; beat's resyncs try again."""
        try:
            result = cluster_resync(cluster)
        except Exception as error:
            logger.exception("cluster %s: the first sync failed", cluster)
            record_error(cluster, Kind.values, f"sync failed: {type(error).__name__}: {error}"[:2000])
            self.stdout.write(f"  not synced: {type(error).__name__} (see the log and the sync page)")
            return
        problems = len(result.errors) + len(result.manifest_errors)
        self.stdout.write(f"  synced{f' with {problems} problems (see the sync page)' if problems else ''}")
