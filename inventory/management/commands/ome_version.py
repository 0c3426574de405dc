from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from inventory import kube
from inventory.models import Cluster
from inventory.ome_release import judge, ome_release_refresh, ome_version_set_admin


class Command(BaseCommand):
    help = (
        "Show which OME a cluster runs and which behaviour profile judges it, and why; set the version "
        "as an administrator (it wins over detection), clear that, or detect again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("cluster", help="the cluster's name")
        action = parser.add_mutually_exclusive_group()
        action.add_argument(
            "--set",
            metavar="VERSION",
            help="a release tag (v1.2.2, v1.3.1) or a behaviour profile name (17b77eda, v1.3, or a proposal such as pr603)",
        )
        action.add_argument("--clear", action="store_true", help="drop the administrator's version: detection decides")
        action.add_argument(
            "--detect", action="store_true", help="read the controller Deployment's image tag (else the CRDs) now"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        cluster = Cluster.objects.filter(name=options["cluster"]).first()
        if cluster is None:
            raise CommandError(f"no cluster named {options['cluster']!r}")
        if options["set"] is not None or options["clear"]:
            try:
                judgement = ome_version_set_admin(cluster, "" if options["clear"] else options["set"])
            except ValueError as error:
                raise CommandError(f"--set: {error}") from error
        elif options["detect"]:
            if not cluster.is_live:
                raise CommandError(f"cluster {cluster.name} is a manifest snapshot: nothing to detect")
            try:
                api = kube.client_for(cluster)
            except kube.KubeError as error:
                raise CommandError(error.message) from error
            try:
                judgement = ome_release_refresh(cluster, api)
            finally:
                kube.close(api)
        else:
            judgement = judge(cluster)
        self.stdout.write(f"cluster {cluster.name}: profile {judgement.behaviour.name} ({judgement.why})")
