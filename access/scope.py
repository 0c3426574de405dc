"""What one user may see and do: a Scope, computed once per request from the user's grants.

Selectors filter their base querysets with `Scope.q(...)` and services check `reads`/`may_patch`,
so every page, endpoint, export, count and history entry reads through the same rule:

- a role on a whole cluster covers every namespace of it and its cluster-scoped objects;
- a role on a namespace covers that namespace's objects and matrix rows, and lets the user read
  the cluster's cluster-scoped objects (ClusterBaseModels, ClusterServingRuntimes) too;
- patching a namespaced object needs patcher on its namespace (or the cluster), a cluster-scoped
  one needs patcher on the cluster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import Q

from .identity import Actor, actor_for
from .models import EVERY_CLUSTER, OIDC_GROUP_PREFIX, Grant, Identity, Role
from .tokens import oidc_groups_unread

NOTHING = 0


@dataclass(frozen=True)
class Scope:
    everywhere: int = NOTHING
    clusters: Mapping[str, int] = field(default_factory=dict)
    namespaces: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    actor: Actor = field(default_factory=Actor)
    _held: dict[int, tuple[bool, frozenset[str], Mapping[str, frozenset[str]]]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    # ---- questions -------------------------------------------------------------------------

    def fingerprint(self) -> str:
        """The rights as text, equal for equal rights: part of the key of anything cached per reader."""
        namespaces = sorted((cluster, sorted(roles.items())) for cluster, roles in self.namespaces.items())
        return repr((self.everywhere, sorted(self.clusters.items()), namespaces))

    def role(self, cluster: str, namespace: str = "") -> int:
        """The role held on `namespace` of `cluster` ("" = on the whole cluster)."""
        found = max(self.everywhere, self.clusters.get(cluster, NOTHING), self.clusters.get(EVERY_CLUSTER, NOTHING))
        if namespace:
            for name in (cluster, EVERY_CLUSTER):
                found = max(found, self.namespaces.get(name, {}).get(namespace, NOTHING))
        return found

    def reads_cluster(self, cluster: str) -> bool:
        """Any part of the cluster: its name, health and cluster-scoped objects."""
        if self.role(cluster) >= Role.VIEWER:
            return True
        return any(self._partial(name) for name in (cluster, EVERY_CLUSTER))

    def reads_whole(self, cluster: str) -> bool:
        """Every namespace of the cluster, so its totals and counts too."""
        return self.role(cluster) >= Role.VIEWER

    def reads(self, cluster: str, namespace: str) -> bool:
        """An object or matrix row of `namespace` ("" = cluster-scoped / the cluster-scope row):
        the row `q("cluster", "namespace")` keeps (`admits`)."""
        return self.admits(cluster, namespace)

    def may_patch(self, cluster: str, namespace: str) -> bool:
        return self.role(cluster, namespace) >= Role.PATCHER

    def may_admin(self, cluster: str) -> bool:
        return self.role(cluster) >= Role.ADMIN

    def read_namespaces(self, cluster: str) -> frozenset[str] | None:
        """The namespaces readable in `cluster` ("" included); None for all of them."""
        if self.reads_whole(cluster):
            return None
        names = {name for key in (cluster, EVERY_CLUSTER) for name in self._partial(key)}
        return frozenset(names | {""}) if names else frozenset()

    def _partial(self, cluster: str, role: int = Role.VIEWER) -> set[str]:
        return {name for name, held in self.namespaces.get(cluster, {}).items() if held >= role}

    # ---- querysets -------------------------------------------------------------------------

    def held(self, role: int = Role.VIEWER) -> tuple[bool, frozenset[str], Mapping[str, frozenset[str]]]:
        """The one definition of what this scope holds `role` on, that `q` writes in SQL and
        `admits` in Python: (every cluster whole, the clusters held whole, cluster -> the
        namespaces held in it; EVERY_CLUSTER's apply in every cluster). Worked out once per role."""
        if role not in self._held:
            self._held[role] = self._holding(role)
        return self._held[role]

    def _holding(self, role: int) -> tuple[bool, frozenset[str], Mapping[str, frozenset[str]]]:
        if self.everywhere >= role or self.clusters.get(EVERY_CLUSTER, NOTHING) >= role:
            return True, frozenset(), {}
        whole = frozenset(name for name, held in self.clusters.items() if held >= role)
        partial = {cluster: frozenset(found) for cluster in self.namespaces if (found := self._partial(cluster, role))}
        return False, whole, partial

    @staticmethod
    def _namespaces_held(found: frozenset[str], role: int) -> frozenset[str]:
        # Readers of a namespace read the cluster-scoped objects; patchers of one patch none.
        return found | ({""} if role == Role.VIEWER else frozenset())

    def q(self, cluster_field: str, namespace_field: str | None = None, *, role: int = Role.VIEWER) -> Q:
        """The rows of a table this scope may read (or hold `role` on). `cluster_field` is the
        lookup of the cluster's name (`cluster__name`), `namespace_field` the namespace's; a
        table without one (clusters, sync states, builds) is read per cluster."""
        every, whole, partial = self.held(role)
        if every:
            return Q()
        allowed = Q(**{f"{cluster_field}__in": sorted(whole)}) if whole else Q(pk__in=[])
        for cluster, found in partial.items():
            if namespace_field is None:
                if cluster == EVERY_CLUSTER:
                    return Q()
                allowed |= Q(**{cluster_field: cluster})
                continue
            part = Q(**{f"{namespace_field}__in": sorted(self._namespaces_held(found, role))})
            allowed |= part if cluster == EVERY_CLUSTER else part & Q(**{cluster_field: cluster})
        return allowed

    def admits(self, cluster: str, namespace: str | None = None, *, role: int = Role.VIEWER) -> bool:
        """Whether `q(..., role=role)` keeps a row of `cluster` and `namespace` (None: a table
        without namespaces): the same definition (`held`), as a Python predicate."""
        every, whole, partial = self.held(role)
        if every or cluster in whole:
            return True
        for name in (cluster, EVERY_CLUSTER):
            if name in partial and (namespace is None or namespace in self._namespaces_held(partial[name], role)):
                return True
        return False

    def q_whole(self, cluster_field: str) -> Q:
        """The rows of clusters this scope reads whole: totals (build counts, metrics) of a
        cluster are shown only to those who read all of it."""
        if self.everywhere >= Role.VIEWER or self.clusters.get(EVERY_CLUSTER, NOTHING) >= Role.VIEWER:
            return Q()
        whole = [name for name, held in self.clusters.items() if held >= Role.VIEWER]
        return Q(**{f"{cluster_field}__in": whole}) if whole else Q(pk__in=[])

    def keys_visible(self, cluster: str, keys: Iterable[tuple[str, str, str]]) -> bool:
        """Every (kind, namespace, name) of `keys` is readable."""
        return all(self.reads(cluster, key[1]) for key in keys)


SYSTEM = Scope(everywhere=Role.ADMIN, actor=Actor(username="system"))


def anonymous_scope() -> Scope:
    """Anonymous users read everything while API_ANONYMOUS_READ is on (`make run`), else nothing."""
    return Scope(everywhere=Role.VIEWER if settings.API_ANONYMOUS_READ else NOTHING)


def scope_for_user(user: Any) -> Scope:
    """The scope of a user (or AnonymousUser / None): superusers hold admin everywhere; others
    hold what their grants and their groups' grants give, at least what anonymous users read.
    Through an API token, the OIDC groups count only while freshly read (oidc_groups_unread)."""
    if user is None or not user.is_authenticated:
        return anonymous_scope()
    if not user.is_active:
        return Scope()
    identity = Identity.objects.filter(user=user).first()
    django_groups = list(user.groups.values_list("name", flat=True))
    oidc_groups = identity.groups if identity and not oidc_groups_unread(user, identity) else []
    # Separate namespaces: a Django group's name as it is, an OIDC group's with its prefix.
    groups = {name for name in django_groups if not name.startswith(OIDC_GROUP_PREFIX)}
    groups |= {OIDC_GROUP_PREFIX + str(group) for group in oidc_groups}
    actor = actor_for(user, identity.name if identity else "", oidc_groups, django_groups)
    if user.is_superuser:
        return Scope(everywhere=Role.ADMIN, actor=actor)
    clusters: dict[str, int] = {}
    namespaces: dict[str, dict[str, int]] = {}
    for grant in Grant.objects.filter(Q(user=user) | Q(user__isnull=True, group__in=groups)):
        if grant.namespace:
            held = namespaces.setdefault(grant.cluster, {})
            held[grant.namespace] = max(held.get(grant.namespace, NOTHING), grant.role)
        else:
            clusters[grant.cluster] = max(clusters.get(grant.cluster, NOTHING), grant.role)
    return Scope(everywhere=anonymous_scope().everywhere, clusters=clusters, namespaces=namespaces, actor=actor)
