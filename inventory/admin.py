from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from core.errors import DomainError

from .models import Cluster, Resource, SyncState
from .services import WEB_SOURCE_HELP, ClusterSpec, cluster_register, cluster_spec_from_web


class ClusterRegistrationForm(forms.ModelForm):
    """A registration through the admin: the API's input and the API's check
    (inventory.services.cluster_spec_from_web), never the model's raw fields."""

    source = forms.CharField(max_length=4096, help_text=WEB_SOURCE_HELP)

    class Meta:
        model = Cluster
        fields = ["name"]

    def __init__(self, *args: Any, author: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.author = author
        self.spec: ClusterSpec | None = None

    def validate_unique(self) -> None:
        """cluster_spec_from_web says it, in the API's words."""

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        if "name" in data and "source" in data:
            try:
                self.spec = cluster_spec_from_web(data["name"], data["source"], author=self.author)
            except DomainError as error:
                self.add_error(error.field if error.field in self.fields else None, error.message)
        return data


# What may change on a registered cluster: not its source, which only a registration checks.
EDITABLE = ["policy_reports"]


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    """Clusters are added through the registration form and never edited here: a changed source
    would skip the registration's check."""

    list_display = ["name", "source", "kubeconfig", "context", "policy_reports", "created_at"]

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if obj is not None:
            return super().get_form(request, obj, change=change, **kwargs)
        form = ClusterRegistrationForm

        class Bound(form):  # type: ignore[valid-type,misc]
            def __init__(self, *args: Any, **kw: Any) -> None:
                super().__init__(*args, author=request.user, **kw)

        return Bound

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return ["name", "source"] if obj is None else super().get_fields(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [] if obj is None else [field.name for field in Cluster._meta.fields if field.name not in EDITABLE]

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        if change:
            obj.save(update_fields=EDITABLE)
            return
        registered = cluster_register(form.spec)
        obj.pk, obj.name = registered.pk, registered.name


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
