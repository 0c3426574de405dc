"""The audit log of pipeline patches: one PatchAttempt per apply, whatever its outcome."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from access.restrict import RestrictedQuerySet, Tenancy
from matching import ObjectKey, key_text

from .errors import AppendOnlyError


class PatchAttemptQuerySet(RestrictedQuerySet["PatchAttempt"]):
    """No bulk update or delete: rows are only ever added."""

    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("the patch audit log is append-only")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("the patch audit log is append-only")


class PatchAttempt(models.Model):
    """Who tried to apply which merge patch to which model, when, and what came of it.

    Identities are stored as text, not foreign keys, so that the record outlives the cluster,
    the inventory row and the user account (a deleted user leaves `username`).
    """

    class Result(models.TextChoices):
        APPLIED = "applied"
        ALREADY_APPLIED = "already_applied", "Already applied"
        CONFLICT = "conflict"
        REJECTED = "rejected"
        DENIED = "denied"
        UNAUTHORIZED = "unauthorized", "Credentials refused by the cluster"
        NOT_FOUND = "not_found", "Not found"
        UNAVAILABLE = "unavailable"
        ERROR = "error"

    class Target(models.TextChoices):
        CLUSTER = "cluster", "Sent to the cluster"
        INVENTORY = "inventory", "Stored copy only (manifest snapshot)"
        NONE = "", "Nothing sent"

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="patch_attempts"
    )
    username = models.CharField(max_length=150, blank=True)
    identity = models.CharField(
        max_length=255, blank=True, help_text="The user as clusters know them: the OIDC username (else the account)."
    )
    groups = models.JSONField(default=list, blank=True, help_text="The user's groups (OIDC groups, else Django's).")
    cluster_name = models.CharField(max_length=63)
    model_kind = models.CharField(max_length=32, blank=True)
    model_namespace = models.CharField(max_length=253, blank=True)
    model_name = models.CharField(max_length=253, blank=True)
    runtime = models.CharField(max_length=600, blank=True, help_text="Kind/[namespace/]name of the planned runtime.")
    patch = models.JSONField(null=True, blank=True, help_text="The merge patch as requested.")
    resource_version = models.CharField(max_length=128, blank=True, help_text="The version the user saw.")
    new_resource_version = models.CharField(max_length=128, blank=True)
    target = models.CharField(max_length=16, choices=Target.choices, blank=True)
    result = models.CharField(max_length=24, choices=Result.choices)
    detail = models.TextField(blank=True)

    TENANCY = Tenancy("cluster_name", "model_namespace")
    objects = PatchAttemptQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        # Only "view": nobody, superusers included, gets add/change/delete through the admin.
        # Applying a patch needs a role (access.scope), not a Django permission.
        default_permissions = ("view",)
        indexes = [
            models.Index(fields=["cluster_name", "model_kind", "model_namespace", "model_name"]),
            models.Index(fields=["result"]),
            models.Index(fields=["username"]),
        ]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.username or '-'} {self.model_text} {self.result}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError("the patch audit log is append-only")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("the patch audit log is append-only")

    @property
    def model_key(self) -> ObjectKey:
        return (self.model_kind, self.model_namespace, self.model_name)

    @property
    def model_text(self) -> str:
        return f"{self.cluster_name}: {key_text(self.model_key)}"
