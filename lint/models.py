"""Who acknowledged which lint finding group, and why: acknowledged groups are hidden from the
lint page and its counts until withdrawn, or until the group's findings change."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from access.restrict import RestrictedQuerySet, Tenancy
from inventory.models import Cluster

ACKNOWLEDGE_PERMISSION = "lint.acknowledge_finding"


class LintAcknowledgement(models.Model):
    """An acknowledgement of one finding group (`lint.rules.FindingGroup.key`) as its findings
    were (`signature`). Kept when withdrawn (`withdrawn_*`): the record says who hid what, why
    and when, and who showed it again."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="lint_acknowledgements")
    key = models.CharField(max_length=1024)
    signature = models.CharField(max_length=64)
    title = models.TextField(help_text="The group's title when acknowledged.")
    reason = models.TextField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    username = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    withdrawn_by = models.CharField(max_length=150, blank=True)

    TENANCY = Tenancy("cluster__name")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        permissions = [("acknowledge_finding", "Can acknowledge lint findings (hide them, with a reason)")]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "key"], condition=Q(withdrawn_at__isnull=True), name="lint_ack_one_active"
            )
        ]

    def __str__(self) -> str:
        return f"{self.cluster}: {self.key} by {self.username}"


class LintProofs(models.Model):
    """What the what-if found for every lint fix of a cluster at one inventory fingerprint
    (lint.proving, in a task after each matrix update): the lint page shows a fix only with
    the proofs made for the inventory it shows. One row per cluster, replaced when proven again."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="+")
    fingerprint = models.CharField(
        max_length=255, blank=True, help_text="inventory.parsed.inventory_fingerprint the proofs were made for."
    )
    proofs = models.JSONField(null=True, help_text="By finding group key (lint.rules.proofs.proofs_json).")
    manifests = models.JSONField(
        null=True, help_text="The YAML each fix form fills in: [group key, role, fix index, object key, YAML]."
    )
    seconds = models.FloatField(null=True, help_text="The CPU seconds proving took.")
    proven_at = models.DateTimeField(null=True)
    queued_at = models.DateTimeField(
        null=True, help_text="When a proving task was queued and not yet started (one at a time per cluster)."
    )

    TENANCY = Tenancy("cluster__name")
    objects = RestrictedQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.cluster}: lint proofs at {self.fingerprint or 'none yet'}"
