"""Policies (versioned RuntimePolicy documents), each assertion's state per cluster, the
baselines that pins compare with, and the webhook receivers with their delivery log."""

from __future__ import annotations

from django.db import models

from access.restrict import RestrictedQuerySet, Tenancy
from inventory.models import Cluster


class Policy(models.Model):
    """One RuntimePolicy document (matching.policy), as loaded from a file or written in the
    admin. `version` grows with every change of `text`; each version is kept as a revision."""

    class Source(models.TextChoices):
        FILE = "file"
        ADMIN = "admin"

    name = models.CharField(max_length=63, unique=True)
    text = models.TextField(help_text="The RuntimePolicy document, YAML (docs/policies.md).")
    version = models.PositiveIntegerField(default=1)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.ADMIN)
    path = models.CharField(max_length=1000, blank=True, help_text="The file it was loaded from.")
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "policies"

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class PolicyRevision(models.Model):
    policy = models.ForeignKey(Policy, on_delete=models.CASCADE, related_name="revisions")
    version = models.PositiveIntegerField()
    text = models.TextField()
    source = models.CharField(max_length=8, choices=Policy.Source.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["policy", "-version"]
        constraints = [models.UniqueConstraint(fields=["policy", "version"], name="policy_revision_once")]

    def __str__(self) -> str:
        return f"{self.policy_id} v{self.version}"


class PolicyBaseline(models.Model):
    """OME's picks and decisions on a cluster when a policy version was first evaluated there:
    what pickUnchanged and decisionUnchanged compare with (matching.policy.Baseline)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="policy_baselines")
    policy = models.ForeignKey(Policy, on_delete=models.CASCADE, related_name="baselines")
    version = models.PositiveIntegerField()
    data = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    TENANCY = Tenancy("cluster__name")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["cluster", "policy", "version"], name="policy_baseline_once"),
        ]

    def __str__(self) -> str:
        return f"baseline of policy {self.policy_id} v{self.version} on cluster {self.cluster_id}"


class AssertionState(models.Model):
    """An assertion's state on a cluster: passing or failing since when, and the inventory
    change (the matrix update's causes, at `inventory_version`) that broke or fixed it."""

    class Severity(models.TextChoices):
        ERROR = "error"
        WARNING = "warning"

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="assertion_states")
    policy = models.ForeignKey(Policy, on_delete=models.CASCADE, related_name="states")
    assertion = models.CharField(max_length=63)
    kind = models.CharField(max_length=32)
    severity = models.CharField(max_length=8, choices=Severity.choices)
    policy_version = models.PositiveIntegerField()
    passing = models.BooleanField()
    checked = models.PositiveIntegerField(default=0)
    namespaces = models.JSONField(
        null=True,
        blank=True,
        help_text="The assertion's namespace globs (empty: every namespace), which say who sees it; "
        "null until evaluated again after this field was added: shown to readers of the whole cluster only.",
    )
    failures = models.JSONField(default=list, blank=True)
    note = models.CharField(max_length=200, blank=True)
    since = models.DateTimeField()
    inventory_version = models.BigIntegerField(default=0, help_text="The cluster's inventory version at the change.")
    causes = models.JSONField(default=list, blank=True, help_text="The inventory changes of that matrix update.")
    evaluated_at = models.DateTimeField()

    TENANCY = Tenancy("cluster__name")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["cluster", "policy__name", "assertion"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "policy", "assertion"], name="assertion_state_once"),
        ]

    def __str__(self) -> str:
        return f"{self.assertion} on cluster {self.cluster_id}: {'passing' if self.passing else 'failing'}"

    @property
    def ident(self) -> str:
        return f"{self.policy.name}/{self.assertion}"


class PickSnapshot(models.Model):
    """The picks of a cluster's last policy evaluation, to notice pick changes between two."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="pick_snapshot")
    picks = models.JSONField(default=dict)
    evaluated_at = models.DateTimeField()
    inventory_version = models.BigIntegerField(default=0)

    TENANCY = Tenancy("cluster__name")
    objects = RestrictedQuerySet.as_manager()

    def __str__(self) -> str:
        return f"picks of cluster {self.cluster_id}"


class Receiver(models.Model):
    """An outgoing webhook, for one cluster (or all) and namespace globs. The signing key is
    never stored: `secret_file` names a file of WEBHOOK_SECRET_DIR (a mounted Secret)."""

    class Format(models.TextChoices):
        JSON = "json", "Generic JSON, signed (HMAC-SHA256)"
        SLACK = "slack", "Slack-compatible text"

    name = models.SlugField(max_length=63, unique=True)
    url = models.URLField(max_length=2000, help_text="Shown as scheme and host only once saved.")
    format = models.CharField(max_length=8, choices=Format.choices, default=Format.JSON)
    secret_file = models.CharField(
        max_length=253, blank=True, help_text="A file name in WEBHOOK_SECRET_DIR holding the signing key."
    )
    cluster = models.ForeignKey(Cluster, null=True, blank=True, on_delete=models.CASCADE, related_name="receivers")
    namespaces = models.CharField(
        max_length=1000, blank=True, help_text="Comma-separated namespace globs; empty: every namespace."
    )
    on_assertion_change = models.BooleanField(default=True)
    on_pick_change = models.BooleanField(default=False)
    enabled = models.BooleanField(default=True)

    TENANCY = Tenancy("cluster__name")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Delivery(models.Model):
    """One event for one receiver; `event_id` is unique per receiver, so an event queued twice
    (a task run again, a worker restarted) is delivered once."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"
        DELIVERED = "delivered"
        FAILED = "failed"

    receiver = models.ForeignKey(Receiver, on_delete=models.CASCADE, related_name="deliveries")
    event_id = models.CharField(max_length=64)
    event = models.CharField(max_length=32)
    cluster_name = models.CharField(max_length=253)
    payload = models.JSONField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING, db_index=True)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=500, blank=True)
    next_attempt_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    TENANCY = Tenancy("cluster_name")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "deliveries"
        constraints = [models.UniqueConstraint(fields=["receiver", "event_id"], name="delivery_once")]

    def __str__(self) -> str:
        return f"{self.event} {self.event_id[:12]} -> receiver {self.receiver_id}: {self.status}"
