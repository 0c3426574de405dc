from __future__ import annotations

import dataclasses
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory.services import cluster_register
from inventory.sources import SOURCES, command_nouns


class Command(BaseCommand):
    @property
    def help(self) -> str:  # type: ignore[override]  # read when the parser is made: the sources then
        return f"Register a cluster: {command_nouns()}."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        sources = parser.add_mutually_exclusive_group(required=True)
        for source in SOURCES.values():
            source.add_arguments(sources, parser)
        parser.add_argument(
            "--ome-version",
            default="",
            metavar="VERSION",
            help="the OME the cluster runs: a release tag (v0.1.5) or a behaviour profile name; wins over "
            "detection (manifest snapshots default to the newest profile)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # argparse leaves exactly one source's option given.
        spec = next(s for source in SOURCES.values() if (s := source.spec_from_options(options["name"], options)))
        spec = dataclasses.replace(spec, ome_version=options["ome_version"])
        try:
            cluster = cluster_register(spec)
        except (
            ValueError
        ) as error:  # a kubeconfig outside the directory, unreadable, no such context, or a bad --ome-version
            raise CommandError(str(error)) from None
        self.stdout.write(f"cluster {cluster.name}: {cluster.describe_source()}")
