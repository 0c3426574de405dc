"""Print the ClusterRole that lets the dashboard impersonate exactly the users and groups it
knows, for delegating clusters (deploy/delegation/).

Kubernetes RBAC matches `resourceNames` exactly: there is no wildcard or prefix form, so "every
name starting with oidc:" cannot be granted. The nearest is this list of every prefixed name
and group of the dashboard's users (OIDC identities seen at sign-in, Django accounts and
groups). Run it again and apply the output when users join; a user missing from it is refused
by the cluster, never given more.
"""

from __future__ import annotations

from typing import Any

import yaml
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from access.identity import actor_for, unsendable
from access.models import Identity

ROLE = "ome-compat-impersonate"


class Command(BaseCommand):
    help = "Print the ClusterRole allowing impersonation of the dashboard's (prefixed) users and groups only."

    def handle(self, *args: Any, **options: Any) -> None:
        users, groups = impersonated_names()
        rules = [
            {"apiGroups": [""], "resources": [resource], "verbs": ["impersonate"], "resourceNames": names}
            for resource, names in (("users", users), ("groups", groups))
            # An empty resourceNames would allow every name.
            if names
        ]
        role = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": ROLE},
            "rules": rules,
        }
        self.stdout.write(yaml.safe_dump(role, sort_keys=False))


def impersonated_names() -> tuple[list[str], list[str]]:
    """The prefixed user names and groups the dashboard may send, sorted; names a header cannot
    carry (which the dashboard refuses to send) are left out."""
    identities = {identity.user_id: identity for identity in Identity.objects.all()}
    users: set[str] = set()
    groups: set[str] = set()
    for user in get_user_model().objects.filter(is_active=True).prefetch_related("groups"):
        identity = identities.get(user.pk)
        actor = actor_for(
            user,
            identity.name if identity else "",
            identity.groups if identity else [],
            [group.name for group in user.groups.all()],
        )
        if unsendable(actor) is None:
            users.add(actor.kube_user)
            groups.update(actor.kube_groups)
    return sorted(users), sorted(groups)
