"""Reads of the audit log."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from access.restrict import Action
from access.scope import Scope

from .models import PatchAttempt

AUDIT_PERMISSION = "patches.view_patchattempt"


def may_audit(user: Any) -> bool:
    """Whether the user may read the audit log (of the objects the user reads): who patched
    what is not shown to every reader of the object."""
    return bool(user is not None and user.is_authenticated and user.has_perm(AUDIT_PERMISSION))


def patch_records_list(scope: Scope, user: Any) -> QuerySet[PatchAttempt]:
    """The attempts whose record (who patched what) `user` may see: in `scope`, every one with
    the audit permission, else the user's own."""
    attempts = patch_attempt_list(scope)
    if may_audit(user):
        return attempts
    return attempts.filter(user=user) if user is not None and user.is_authenticated else attempts.none()


def patch_attempt_list(scope: Scope) -> QuerySet[PatchAttempt]:
    """The attempts on objects of the namespaces (and, for cluster-scoped models, the clusters)
    the scope reads, newest first. Listing them needs `patches.view_patchattempt` (web.api.patches)."""
    return PatchAttempt.objects.restrict(scope, Action.VIEW).order_by("-created_at", "-pk")
