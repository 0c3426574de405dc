"""The compatibility matrix: derived data, rebuilt from the inventory at any time.

A `MatrixBuild` is one generation. Readers use the newest succeeded build of a cluster, so a
build in progress (or one that failed) is never seen. Each `MatrixRow` is one model's OME
selection in one namespace; its cells (one per runtime in scope) are derived from the row:
ranked matches, manual-only runtimes, and everything else excluded, whose reason texts are
computed on demand.
"""

from __future__ import annotations

from django.db import models

from access.restrict import RestrictedQuerySet, Tenancy
from inventory.models import Cluster, Resource


class CellStatus(models.TextChoices):
    SELECTED = "selected"
    COMPATIBLE = "compatible"
    MANUAL_ONLY = "manual-only"
    EXCLUDED = "excluded"
    DISABLED = "disabled"


class MatrixBuild(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    class Trigger(models.TextChoices):
        FULL = "full"

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="matrix_builds")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.FULL)
    ome_behaviour = models.CharField(max_length=255)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(null=True, blank=True, help_text="Last incremental update.")
    chunks = models.PositiveIntegerField(default=1)
    chunks_done = models.PositiveIntegerField(default=0)
    models_count = models.PositiveIntegerField(default=0)
    runtimes_count = models.PositiveIntegerField(default=0)
    rows_count = models.PositiveIntegerField(default=0)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # What the rows cover (matrix.updates): every inventory change up to `applied_version` is in
    # them, and `scope_digest` names the runtimes and InferenceServices the rows were last all
    # computed against (a removed one changes it).
    applied_version = models.BigIntegerField(default=0)
    scope_digest = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)

    TENANCY = Tenancy("cluster__name")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-started_at", "-pk"]
        indexes = [models.Index(fields=["cluster", "status", "-started_at"])]

    def __str__(self) -> str:
        return f"{self.cluster} build {self.pk} ({self.status})"

    @property
    def generation(self) -> tuple[object, ...]:
        """Changes whenever the build's cells may: a full build is a new build, and every
        incremental update stamps `updated_at`."""
        return (self.pk, self.cluster_id, self.started_at, self.finished_at, self.updated_at)


class MatrixRow(models.Model):
    """One model's selection in one namespace ("" = ClusterServingRuntimes only)."""

    class Outcome(models.TextChoices):
        SELECTED = "selected", "a runtime is selected"
        NO_RUNTIME = "no-runtime", "no runtime found"
        INVALID = "invalid", "invalid model"

    build = models.ForeignKey(MatrixBuild, on_delete=models.CASCADE, related_name="rows")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    model = models.ForeignKey(Resource, on_delete=models.CASCADE, related_name="matrix_rows")
    namespace = models.CharField(max_length=253, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    selected = models.ForeignKey(Resource, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    selected_score = models.IntegerField(null=True, blank=True)
    # [[kind, namespace, name, score, entry], ...] best first; the first is OME's pick. Keys,
    # not ids, so that history can name a runtime after it is deleted.
    compatible = models.JSONField(default=list)
    # [[kind, namespace, name, reason], ...]: compatible but not auto-selectable.
    manual = models.JSONField(default=list)
    invalid_reason = models.TextField(blank=True)
    # The cluster's inventory_version read before the inventory this row was computed from: the
    # row is stale once its model (or any runtime) has a newer version.
    inventory_version = models.BigIntegerField(default=0)

    TENANCY = Tenancy("cluster__name", "namespace")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["model__name", "namespace"]
        constraints = [models.UniqueConstraint(fields=["build", "model", "namespace"], name="matrix_row_identity")]
        indexes = [models.Index(fields=["build", "namespace"]), models.Index(fields=["build", "outcome"])]

    def __str__(self) -> str:
        return f"{self.model} in {self.namespace or '(cluster scope)'}"


class CellChange(models.Model):
    """A cell whose status changed, when and because of which inventory change."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="cell_changes")
    changed_at = models.DateTimeField(auto_now_add=True, db_index=True)
    model_kind = models.CharField(max_length=32)
    model_namespace = models.CharField(max_length=253, blank=True)
    model_name = models.CharField(max_length=253)
    runtime_kind = models.CharField(max_length=32)
    runtime_namespace = models.CharField(max_length=253, blank=True)
    runtime_name = models.CharField(max_length=253)
    namespace = models.CharField(max_length=253, blank=True)
    old_status = models.CharField(max_length=16, blank=True)
    new_status = models.CharField(max_length=16, blank=True)
    # [{"kind", "namespace", "name", "action", "fields"}, ...]; empty for a full rebuild.
    cause = models.JSONField(default=list)

    TENANCY = Tenancy("cluster__name", "namespace")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-changed_at", "-pk"]
        indexes = [models.Index(fields=["cluster", "model_kind", "model_namespace", "model_name"])]

    def __str__(self) -> str:
        return f"{self.model_name} x {self.runtime_name}: {self.old_status or '-'} -> {self.new_status or '-'}"


class MatrixAudit(models.Model):
    """One audit of a cluster's matrix: a sample of rows recomputed from scratch and compared."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="matrix_audits")
    audited_at = models.DateTimeField(auto_now_add=True, db_index=True)
    models_checked = models.PositiveIntegerField(default=0)
    rows_checked = models.PositiveIntegerField(default=0)
    # Rows that differed from the recomputation although no change was pending for them; each
    # was repaired. [[kind, namespace, name, row namespace], ...], at most 50.
    rows_differing = models.PositiveIntegerField(default=0)
    examples = models.JSONField(default=list)

    TENANCY = Tenancy("cluster__name")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-audited_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.cluster} audit {self.audited_at:%Y-%m-%d %H:%M}: {self.rows_differing} differing"
