"""Reads of the audit log."""

from __future__ import annotations

from django.db.models import QuerySet

from access.current import current_scope
from access.scope import Scope

from .models import PatchAttempt


def patch_attempt_list(scope: Scope | None = None) -> QuerySet[PatchAttempt]:
    """The attempts on objects of the namespaces (and, for cluster-scoped models, the clusters)
    the scope reads, newest first. Listing them needs `patches.view_patchattempt` (patches.api)."""
    scope = current_scope(scope)
    return PatchAttempt.objects.filter(scope.q("cluster_name", "model_namespace")).order_by("-created_at", "-pk")
