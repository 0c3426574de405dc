"""The one read path: every read made for a reader starts from `Model.objects.restrict(scope,
action)`, which keeps the rows that `scope` may `action` (NetBox's RestrictedQuerySet, with our
Scope in place of object permissions).

A model that holds a tenant's data (it names a cluster, and maybe a namespace) says where with
`TENANCY` and takes `RestrictedQuerySet` as its manager; scripts/check_reads.py (`make lint`,
tests/access/test_reads.py) fails the build on a read of such a model anywhere in the project's
packages that does not go through `restrict`, except in the code its allow-list names (sync,
matrix builds, the catch-up).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from django.db import models

from .models import Role
from .scope import Scope

if TYPE_CHECKING:
    from typing import Self

M = TypeVar("M", bound=models.Model)


class Action(enum.Enum):
    """What a reader does with the rows, and the role it takes."""

    VIEW = Role.VIEWER
    PATCH = Role.PATCHER
    ADMIN = Role.ADMIN


@dataclass(frozen=True)
class Tenancy:
    """Where a row names its tenant: the lookup of its cluster's name (`cluster__name`) and of its
    namespace (None: the rows belong to a cluster as a whole, and any reader of the cluster reads
    them)."""

    cluster: str
    namespace: str | None = None


class RestrictedQuerySet(models.QuerySet[M]):
    def restrict(self, scope: Scope, action: Action) -> Self:
        """The rows `scope` may `action`: the only way a request reads a tenant's rows."""
        tenancy: Tenancy = self.model.TENANCY  # type: ignore[attr-defined]
        return self.filter(scope.q(tenancy.cluster, tenancy.namespace, role=action.value))
