"""OME resources mirrored from clusters and manifest folders, and the state of each sync."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from django.db import models
from django.utils import timezone

from access.restrict import RestrictedQuerySet, Tenancy

if TYPE_CHECKING:
    from .sources.base import ClusterSource

OME_GROUP = "ome.io"
OME_VERSION = "v1beta1"


class Kind(models.TextChoices):
    CLUSTER_BASE_MODEL = "ClusterBaseModel"
    BASE_MODEL = "BaseModel"
    CLUSTER_SERVING_RUNTIME = "ClusterServingRuntime"
    SERVING_RUNTIME = "ServingRuntime"
    INFERENCE_SERVICE = "InferenceService"


PLURALS: dict[str, str] = {
    Kind.CLUSTER_BASE_MODEL: "clusterbasemodels",
    Kind.BASE_MODEL: "basemodels",
    Kind.CLUSTER_SERVING_RUNTIME: "clusterservingruntimes",
    Kind.SERVING_RUNTIME: "servingruntimes",
    Kind.INFERENCE_SERVICE: "inferenceservices",
}
CLUSTER_SCOPED = frozenset({Kind.CLUSTER_BASE_MODEL, Kind.CLUSTER_SERVING_RUNTIME})
MODEL_KINDS = (Kind.CLUSTER_BASE_MODEL, Kind.BASE_MODEL)
RUNTIME_KINDS = (Kind.CLUSTER_SERVING_RUNTIME, Kind.SERVING_RUNTIME)


# inventory.sources builds on this module (it registers and reads clusters), so the model
# imports it where it is used, not at the top.


def source_choices() -> list[tuple[str, str]]:
    """The choices of Cluster.source: the registered sources (inventory.sources.SOURCES)."""
    from .sources import source_choices

    return source_choices()


class _Sources:
    """Cluster.Source: the registered sources as TextChoices (inventory.sources.source_enum)."""

    def __get__(self, instance: object, owner: type) -> type[models.TextChoices]:
        from .sources import source_enum

        return source_enum()


class Cluster(models.Model):
    """A cluster to mirror: a live API server (kubeconfig, in-cluster, or an Argo CD cluster
    Secret on the hub) or a manifest folder; each source is a module of inventory.sources.

    Credentials are referenced by path and context, or by the Secret's namespace and name, only;
    they are never stored here.
    """

    Source = _Sources()

    name = models.SlugField(max_length=63, unique=True)
    source = models.CharField(max_length=16, choices=source_choices)
    kubeconfig = models.CharField(max_length=1024, blank=True, help_text="Path of a kubeconfig file.")
    context = models.CharField(max_length=253, blank=True, help_text="kubeconfig context; empty for the current one.")
    manifests = models.JSONField(default=list, blank=True, help_text="Manifest files or folders, for a snapshot.")
    argocd_secret = models.CharField(
        max_length=317, blank=True, help_text="NAMESPACE/NAME of the Argo CD cluster Secret on the hub, read at use."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Bumped by every committed change to the cluster's objects; a reader that saw version N
    # reads only the objects whose `version` is above N to catch up.
    inventory_version = models.BigIntegerField(default=0)

    class OmeSource(models.TextChoices):
        """How the cluster's OME version was learned (inventory.ome_release)."""

        IMAGE = "image", "the OME controller Deployment's image tag"
        CRD = "crd", "the OME CRDs' schemas"

    # Which OME the cluster runs, which decides the behaviour profile that judges it. Detected
    # (`ome_version` + `ome_version_source` + `ome_version_evidence`), unless an administrator
    # (or, for a manifest snapshot, its registration) set `ome_version_admin`, which wins.
    ome_version = models.CharField(max_length=128, blank=True, help_text="Release tag or profile name, as detected.")
    ome_version_source = models.CharField(max_length=16, choices=OmeSource.choices, blank=True)
    ome_version_evidence = models.CharField(max_length=512, blank=True, help_text="What the detection read, in words.")
    ome_version_admin = models.CharField(
        max_length=128, blank=True, help_text="Release tag or profile name set by an administrator; wins."
    )

    policy_reports = models.BooleanField(
        default=False,
        help_text="Write the dashboard's findings into the cluster as PolicyReports after each matrix update "
        "(docs/reports.md); needs a live cluster and write access to wgpolicyk8s.io reports.",
    )

    TENANCY = Tenancy("name")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def registered_source(self) -> ClusterSource:
        """What reads this cluster (inventory.sources): its client, its snapshot, its description."""
        from .sources import source_of

        return source_of(self.source)

    @property
    def is_live(self) -> bool:
        return self.registered_source.live

    def describe_source(self) -> str:
        return self.registered_source.describe(self)


class Resource(models.Model):
    """One OME object of one cluster: the whole object as read, plus columns to filter on."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="resources")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    namespace = models.CharField(max_length=253, blank=True, default="")
    name = models.CharField(max_length=253)
    # Values from the cluster are stored unbounded where nothing indexes them; the indexed
    # columns below are bounded, and records.columns leaves a longer value out (see store_error).
    uid = models.TextField(blank=True)
    resource_version = models.TextField(blank=True)
    generation = models.BigIntegerField(null=True, blank=True)
    obj = models.JSONField(help_text="The object as the API returned it (manifests: with CRD defaults).")
    content_hash = models.CharField(max_length=64)
    error = models.TextField(blank=True, help_text="Why the object cannot be evaluated, if it is malformed.")
    source_path = models.CharField(max_length=1024, blank=True)
    store_error = models.TextField(
        blank=True, help_text="What of the object as sent could not be stored as it was, and what was stored instead."
    )

    model_format = models.CharField(max_length=512, blank=True)
    model_architecture = models.TextField(blank=True)
    pipeline_class = models.CharField(max_length=512, blank=True)
    has_pipeline = models.BooleanField(default=False)
    storage_scheme = models.CharField(max_length=32, blank=True)
    disabled = models.BooleanField(default=False)

    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    # When the stored content last changed (an unchanged event bumps last_seen only): how long
    # the matrix has lacked a change is dated by this (matrix.freshness).
    changed_at = models.DateTimeField(default=timezone.now)
    version = models.BigIntegerField(default=0, help_text="The cluster's inventory_version when this last changed.")

    TENANCY = Tenancy("cluster__name", "namespace")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["kind", "namespace", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "kind", "namespace", "name"], name="resource_identity"),
        ]
        indexes = [
            models.Index(fields=["cluster", "kind", "namespace"]),
            models.Index(fields=["cluster", "model_format"]),
            models.Index(fields=["cluster", "pipeline_class"]),
            models.Index(fields=["cluster", "storage_scheme"]),
            models.Index(fields=["cluster", "version"]),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)


class SyncState(models.Model):
    """How one kind of one cluster was last synced: shown on the sync page and the API."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="sync_states")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    last_list_at = models.DateTimeField(null=True, blank=True)
    resource_version = models.TextField(blank=True)
    # Set by the process holding the watch; it counts only while that process renews the lease
    # (see `watch_live`), so a holder that died without saying reads as not connected.
    watch_connected = models.BooleanField(default=False)
    # When the watch was last seen to stop (or a dead holder's lease was taken over); null while
    # connected. Freshness says "stale since" from it.
    watch_lost_at = models.DateTimeField(null=True, blank=True)
    watch_reconnects = models.PositiveIntegerField(default=0)
    last_event_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    # "list" or "watch": which of the two recorded last_error (a connecting watch clears its own only).
    last_error_from = models.CharField(max_length=8, blank=True)
    count = models.PositiveIntegerField(default=0)
    invalid = models.PositiveIntegerField(default=0)
    # Objects of the last list that could not be stored at all (no usable name), one message each.
    rejected = models.JSONField(default=list, blank=True)
    # The watch of this kind is held by `watch_owner` until `watch_lease_until` (renewed while it
    # runs), so ensure_watches never starts a second one. Empty owner: nobody is watching.
    watch_owner = models.CharField(max_length=128, blank=True)
    watch_lease_until = models.DateTimeField(null=True, blank=True)

    TENANCY = Tenancy("cluster__name")
    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["cluster__name", "kind"]
        constraints = [models.UniqueConstraint(fields=["cluster", "kind"], name="sync_state_identity")]

    def __str__(self) -> str:
        return f"{self.cluster} {self.kind}"

    def watch_live_at(self, now: datetime) -> bool:
        """Connected, and the holder renewed its lease in time: the claim has a deadline."""
        return self.watch_connected and self.watch_lease_until is not None and self.watch_lease_until > now

    @property
    def watch_live(self) -> bool:
        """`watch_live_at` the database's clock, which sets the leases (inventory.live.leases),
        when the row was read with it (annotated `database_now=Now()`), else this process's."""
        return self.watch_live_at(getattr(self, "database_now", None) or timezone.now())
