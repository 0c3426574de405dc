"""Roles for test users (access.models.Grant), as `manage.py access_grant` gives them."""

from __future__ import annotations

from typing import Any

from access.models import EVERY_CLUSTER, Grant, Role


def grant(user: Any, role: str = "patcher", *, cluster: str = EVERY_CLUSTER, namespace: str = "") -> Grant:
    return Grant.objects.create(user=user, role=Role[role.upper()], cluster=cluster, namespace=namespace)
