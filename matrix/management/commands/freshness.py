from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from inventory.models import Cluster
from matrix.freshness import freshness_of


class Command(BaseCommand):
    help = "Say how current each cluster's data is (matrix.freshness): live, lagging, stale or unknown, and why."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="one JSON object: cluster name -> freshness")

    def handle(self, *args: Any, **options: Any) -> None:
        # Every cluster, by design: this is the operator's view, as /metrics with its token.
        judged = freshness_of(Cluster.objects.order_by("name"))
        if options["json"]:
            self.stdout.write(json.dumps({name: freshness.to_dict() for name, freshness in judged.items()}))
            return
        for name, freshness in judged.items():
            self.stdout.write(f"{name}: {freshness.summary()}")
