"""Who may see and change what: roles granted per cluster and namespace, the clusters whose own
RBAC decides patches, and the identity (OIDC name and groups) a user acts under.

Clusters are named, not referenced: a grant, like a Kubernetes RoleBinding, may be made before
the cluster is registered and outlives it; `*` names every cluster.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

EVERY_CLUSTER = "*"


class Role(models.IntegerChoices):
    """Each role includes the ones below it."""

    VIEWER = 1, "viewer: reads the objects, matrix rows, findings and history"
    PATCHER = 2, "patcher: also applies diffusionPipeline patches"
    ADMIN = 3, "admin: also resyncs the cluster and reads its patch audit log"


# A grant's group of the OIDC token is written with this prefix (`oidc:ml-platform`); one
# without it is a Django group's name. The two never meet: a Django group named like an OIDC
# group (anyone able to name one in the identity provider) gets nothing of the other's grants.
OIDC_GROUP_PREFIX = "oidc:"


class Grant(models.Model):
    """A role on a whole cluster (`namespace` empty), or on one namespace of it, for one user or
    for everyone in a group: a Django group's name, or `oidc:NAME` for a group of the user's
    OIDC token (OIDC_GROUP_PREFIX)."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="access_grants"
    )
    group = models.CharField(
        max_length=253, blank=True, help_text="A Django group's name, or oidc:NAME for a group of the OIDC token."
    )
    cluster = models.CharField(max_length=63, help_text=f"Cluster name, or {EVERY_CLUSTER} for every cluster.")
    namespace = models.CharField(max_length=253, blank=True, help_text="Empty: the whole cluster.")
    role = models.PositiveSmallIntegerField(choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster", "namespace", "group", "user_id"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(user__isnull=False) & models.Q(group=""))
                | (models.Q(user__isnull=True) & ~models.Q(group="")),
                name="grant_user_xor_group",
            ),
            models.UniqueConstraint(fields=["user", "group", "cluster", "namespace"], name="grant_identity"),
        ]

    def __str__(self) -> str:
        who = f"user {self.user}" if self.user_id else f"group {self.group}"
        where = f"{self.cluster}/{self.namespace}" if self.namespace else f"cluster {self.cluster}"
        return f"{who}: {Role(self.role).name.lower()} on {where}"

    def clean(self) -> None:
        if bool(self.user_id) == bool(self.group):
            raise ValidationError("A grant names a user or a group, not both.")


class Delegation(models.Model):
    """A cluster whose own RBAC decides patches: before each patch the dashboard asks it with a
    SubjectAccessReview, then sends the patch impersonating the user (Impersonate-User/-Group)."""

    cluster = models.CharField(max_length=63, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster"]

    def __str__(self) -> str:
        return f"cluster {self.cluster}: its RBAC decides patches"


class Identity(models.Model):
    """Who a user is beyond the Django account: the OIDC subject, the name and groups from the
    token (kept for authorization and shown in the audit log), refreshed at every sign-in."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_identity")
    subject = models.CharField(max_length=255, blank=True, help_text="OIDC `sub`.")
    name = models.CharField(max_length=255, blank=True, help_text="The OIDC username claim.")
    groups = models.JSONField(default=list, blank=True, help_text="The OIDC groups claim.")
    groups_read_at = models.DateTimeField(
        null=True, blank=True, help_text="When a sign-in last read the claims (API tokens trust groups this fresh)."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "identities"

    def __str__(self) -> str:
        return f"{self.user}: {self.name or '-'} {self.groups}"


class ApiToken(models.Model):
    """A credential for the API (`Authorization: Token <key>`). Only the key's SHA-256 is stored:
    the key is shown once, when it is made. It expires, records when it was last used, and is
    revoked by deleting it (access.tokens)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the token is for (a CI system, a script).")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(max_length=12, editable=False, help_text="The key's first characters, to tell it.")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["user_id", "-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… of {self.user} ({self.name})"
