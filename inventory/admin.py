from django.contrib import admin

from .models import Cluster, Resource, SyncState


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "source", "kubeconfig", "context", "created_at"]


@admin.register(Resource)
class ResourceAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "namespace", "cluster", "model_format", "model_architecture", "error", "last_seen"]
    list_filter = ["cluster", "kind", "storage_scheme", "has_pipeline", "disabled"]
    search_fields = ["name", "namespace", "model_architecture", "pipeline_class"]
    readonly_fields = [field.name for field in Resource._meta.fields]


@admin.register(SyncState)
class SyncStateAdmin(admin.ModelAdmin):
    list_display = [
        "cluster",
        "kind",
        "last_list_at",
        "watch_connected",
        "watch_reconnects",
        "watch_owner",
        "count",
        "invalid",
        "last_error",
        "last_error_at",
    ]
    list_filter = ["cluster", "watch_connected"]
