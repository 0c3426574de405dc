"""Grant, revoke and list roles; turn a cluster's delegation to its own RBAC on or off."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from access.models import EVERY_CLUSTER, Delegation, Grant, Role

ROLES = {role.name.lower(): role for role in Role}


class Command(BaseCommand):
    help = (
        "Roles per cluster and namespace. `access_grant viewer --user ada --cluster prod --namespace team-a`, "
        "`access_grant patcher --group oidc:ml-platform --cluster '*'`, `--revoke`, `--list`, "
        "`--delegate prod` / `--no-delegate prod` (the cluster's RBAC decides patches)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("role", nargs="?", choices=sorted(ROLES), help="viewer, patcher or admin")
        who = parser.add_mutually_exclusive_group()
        who.add_argument("--user", help="Django username")
        who.add_argument("--group", help="a Django group's name, or oidc:NAME for a group of the OIDC token")
        parser.add_argument("--cluster", help=f"cluster name, or {EVERY_CLUSTER} for every cluster")
        parser.add_argument("--namespace", default="", help="one namespace (default: the whole cluster)")
        parser.add_argument("--revoke", action="store_true", help="remove the grant instead")
        parser.add_argument("--list", action="store_true", help="list every grant and delegation")
        parser.add_argument("--delegate", metavar="CLUSTER", help="let the cluster's RBAC decide its patches")
        parser.add_argument("--no-delegate", metavar="CLUSTER", help="let the dashboard's roles decide again")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["delegate"] or options["no_delegate"]:
            self._delegation(options["delegate"], options["no_delegate"])
        elif options["list"]:
            self._list()
        else:
            self._grant(options)

    def _delegation(self, on: str | None, off: str | None) -> None:
        if on:
            Delegation.objects.get_or_create(cluster=on)
            self.stdout.write(f"cluster {on}: its RBAC decides patches (SubjectAccessReview + impersonation)")
        if off:
            Delegation.objects.filter(cluster=off).delete()
            self.stdout.write(f"cluster {off}: the dashboard's roles decide patches")

    def _list(self) -> None:
        for grant in Grant.objects.select_related("user"):
            self.stdout.write(str(grant))
        for delegation in Delegation.objects.all():
            self.stdout.write(str(delegation))

    def _grant(self, options: dict[str, Any]) -> None:
        if not options["role"] or not options["cluster"] or not (options["user"] or options["group"]):
            raise CommandError("give a role, --user or --group, and --cluster (or use --list / --delegate)")
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"]).first()
            if user is None:
                raise CommandError(f"no user named {options['user']!r}")
        identity = {
            "user": user,
            "group": options["group"] or "",
            "cluster": options["cluster"],
            "namespace": options["namespace"],
        }
        if options["revoke"]:
            deleted, _ = Grant.objects.filter(**identity).delete()
            self.stdout.write(f"revoked {deleted} grant(s)")
            return
        grant, _ = Grant.objects.update_or_create(**identity, defaults={"role": ROLES[options["role"]]})
        self.stdout.write(f"granted: {grant}")
