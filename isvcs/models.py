"""What the dashboard remembers of each InferenceService: the first verdict it saw, and today's."""

from __future__ import annotations

from django.db import models

from access.restrict import RestrictedQuerySet, Tenancy
from inventory.models import Cluster


class InferenceServiceVerdict(models.Model):
    """The first verdict seen for an InferenceService and the current one (isvcs.services).

    OME decides an InferenceService's runtime when the service is created or changed, not when
    a model changes (quirk Q30), so the first verdict stands for what OME decided. It restarts
    when the service's own spec, labels or annotations change (`spec_hash`), since OME then
    decides again. Keyed by uid as well: a service deleted and re-created is a new decision.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="isvc_verdicts")
    namespace = models.CharField(max_length=253)
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True)
    spec_hash = models.CharField(max_length=64, blank=True)
    # Verdicts: selected, named, advisory, blocked, waiting or silent; runtimes as [kind, namespace, name] or null.
    first_seen_at = models.DateTimeField()
    first_verdict = models.CharField(max_length=16)
    first_failure = models.CharField(max_length=32, blank=True)
    first_runtime = models.JSONField(null=True, blank=True)
    first_error = models.TextField(blank=True)
    current_at = models.DateTimeField()
    current_verdict = models.CharField(max_length=16)
    current_failure = models.CharField(max_length=32, blank=True)
    current_runtime = models.JSONField(null=True, blank=True)
    current_error = models.TextField(blank=True)

    TENANCY = Tenancy("cluster__name", "namespace")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["cluster", "namespace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "namespace", "name", "uid"], name="isvc_verdict_identity"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}: {self.first_verdict} -> {self.current_verdict}"
