"""Grants, delegating clusters, OIDC identities and API tokens in the admin (superusers, or who holds the
access app's Django permissions)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from .models import ApiToken, Delegation, Grant, Identity


@admin.register(Grant)
class GrantAdmin(admin.ModelAdmin):
    list_display = ["cluster", "namespace", "role", "user", "group", "created_at"]
    list_filter = ["role", "cluster"]
    search_fields = ["cluster", "namespace", "group", "user__username"]
    autocomplete_fields = ["user"]


@admin.register(Delegation)
class DelegationAdmin(admin.ModelAdmin):
    list_display = ["cluster", "created_at"]


@admin.register(Identity)
class IdentityAdmin(admin.ModelAdmin):
    list_display = ["user", "name", "groups", "updated_at"]
    search_fields = ["user__username", "name", "subject"]
    readonly_fields = ["user", "subject", "name", "groups", "updated_at"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Every user's tokens, to see and revoke (delete); they are made by their owner (API, or
    `manage.py api_token`), since the key is shown only to whoever makes it."""

    list_display = ["prefix", "user", "name", "created_at", "expires_at", "last_used_at"]
    list_filter = ["expires_at"]
    search_fields = ["user__username", "name", "prefix"]
    readonly_fields = ["user", "name", "prefix", "created_at", "expires_at", "last_used_at"]
    exclude = ["digest"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ApiToken | None = None) -> bool:
        return False
