from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.scope import SYSTEM
from inventory.models import Kind
from inventory.selectors import ClusterChoiceError, cluster_choose
from inventory.services import manifests_load


class Command(BaseCommand):
    help = "Load OME manifests (YAML or JSON files or folders) into a cluster's inventory."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH")
        parser.add_argument("--cluster", help="cluster name; defaults to the only cluster")
        parser.add_argument("--prune", action="store_true", help="remove objects the paths no longer hold")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            cluster = cluster_choose(options["cluster"], default="only", scope=SYSTEM)
        except ClusterChoiceError as error:
            raise CommandError(str(error)) from error
        result, snapshot = manifests_load(cluster, options["paths"], prune=options["prune"])
        for kind in Kind.values:
            self.stdout.write(result.counts[kind].line(kind))
        if snapshot.skipped:
            kinds = ", ".join(f"{kind}: {count}" for kind, count in sorted(snapshot.skipped.items()))
            self.stdout.write(f"skipped {sum(snapshot.skipped.values())} documents of other kinds ({kinds})")
        for line in snapshot.errors:
            self.stderr.write(line)
        if snapshot.errors:
            raise CommandError(f"{len(snapshot.errors)} bad documents", returncode=1)
