from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

import matching.policy
from inventory.models import Cluster
from policies.evaluation import policies_evaluate
from policies.services import policies_load_files


class Command(BaseCommand):
    help = (
        "Store the RuntimePolicy documents of files and folders (default: the POLICY_FILES setting); a changed "
        "policy gets a new version. Every file is validated first: a bad one changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", metavar="PATH")
        parser.add_argument(
            "--evaluate",
            action="store_true",
            help="then evaluate them on every cluster now (otherwise after each cluster's next matrix update)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        paths = options["paths"] or settings.POLICY_FILES
        if not paths:
            self.stdout.write("no policy files: name them, or set POLICY_FILES")
            return
        try:
            result = policies_load_files(paths)
        except matching.policy.PolicyError as error:
            raise CommandError(str(error)) from None
        for label, names in (("created", result.created), ("changed", result.changed)):
            for name in names:
                self.stdout.write(f"policy {name}: {label}")
        self.stdout.write(
            f"{len(result.created)} created, {len(result.changed)} changed, {len(result.unchanged)} unchanged"
        )
        if options["evaluate"]:
            for cluster in Cluster.objects.order_by("name"):
                evaluated = policies_evaluate(cluster)
                self.stdout.write(
                    f"cluster {cluster.name}: {evaluated.evaluated} evaluated, {evaluated.failing} failing"
                )
