"""Grants, delegating clusters and OIDC identities in the admin (superusers, or who holds the
access app's Django permissions)."""

from __future__ import annotations

from django.contrib import admin

from .models import Delegation, Grant, Identity


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
