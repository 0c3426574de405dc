"""Reads of the audit log."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import PatchAttempt


def patch_attempt_list() -> QuerySet[PatchAttempt]:
    return PatchAttempt.objects.order_by("-created_at", "-pk")
