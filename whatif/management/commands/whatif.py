"""`manage.py whatif --cluster NAME PATH...`: the CI check of manifest trees against a
registered cluster's stored inventory (`whatif.check`); `--all-clusters` checks every one.

Formats and exit codes are those of `python -m matching diff`: 0 when no `--fail-on`
condition occurs, 1 when one does, 2 for bad input (the file, document and field named).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

import matching
from access.scope import SYSTEM
from inventory.selectors import ClusterChoiceError, cluster_choose, cluster_list
from matching.reporting import EXIT_BAD_INPUT, add_lenient_option, add_report_options, emit, fail_on_of

from ...check import check_clusters, items_from_paths
from ...errors import WhatIfError


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", metavar="PATH", help="manifest files or folders")
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--cluster", metavar="NAME", help="the cluster; defaults to the only one")
        which.add_argument("--all-clusters", action="store_true", help="check every registered cluster")
        parser.add_argument(
            "--prune", action="store_true", help="objects the paths do not hold count as deleted (as load_manifests)"
        )
        add_lenient_option(parser)
        add_report_options(parser)

    exit_code = 0

    def execute(self, *args: Any, **options: Any) -> None:
        """The exit status is the verdict (0 or 1) or 2 for bad input: SystemExit when not 0."""
        super().execute(*args, **options)
        if self.exit_code:
            sys.exit(self.exit_code)

    def handle(self, *args: Any, **options: Any) -> None:
        self.exit_code = self.run_check(argparse.Namespace(**options))

    def run_check(self, args: argparse.Namespace) -> int:
        try:
            fail_on_of(args)
            items, origins, warnings = items_from_paths(args.paths, lenient=args.lenient)
            for warning in warnings:
                self.stderr.write(str(warning))
            # The operator's command reads every cluster.
            clusters = (
                list(cluster_list(SYSTEM))
                if args.all_clusters
                else [cluster_choose(args.cluster, default="only", scope=SYSTEM)]
            )
            if not clusters:
                raise ClusterChoiceError("no cluster is registered; add one with `manage.py add_cluster`")
            report = check_clusters(clusters, items, prune=args.prune, scope=SYSTEM, origins=origins)
            return emit(report, args, self.stdout)
        except WhatIfError as error:
            self.stderr.write(f"{' '.join(args.paths)}: {error}")
            return EXIT_BAD_INPUT
        except (matching.TreeError, ClusterChoiceError, ValueError) as error:
            self.stderr.write(str(error))
            return EXIT_BAD_INPUT
        except OSError as error:
            self.stderr.write(str(error))
            return EXIT_BAD_INPUT
