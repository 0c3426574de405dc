"""The audit log in the admin: readable by who holds patches.view_patchattempt, never editable."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import PatchAttempt


@admin.register(PatchAttempt)
class PatchAttemptAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "username",
        "identity",
        "cluster_name",
        "model_kind",
        "model_namespace",
        "model_name",
        "result",
        "target",
    ]
    list_filter = ["result", "target", "cluster_name", "model_kind"]
    search_fields = ["username", "identity", "model_name", "model_namespace", "cluster_name", "detail"]
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in PatchAttempt._meta.fields]

    # Append-only: nobody adds, changes or deletes rows here, superusers included.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
