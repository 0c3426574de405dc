"""One FilterSet per inventory list, shared by the API and the HTML pages (bind it to request.GET)."""

from __future__ import annotations

from django.db.models import Q, QuerySet
from django_filters import rest_framework as filters

from access.current import scope_of
from core.filtering import StrictBooleanFilter
from core.web import ALL_NAMESPACES, CLUSTER_TOKEN

from .models import MODEL_KINDS, RUNTIME_KINDS, Kind, Resource, SyncState
from .selectors import clusters_visible


class NamespaceFilter(filters.CharFilter):
    """An exact namespace; `_cluster` selects cluster scope (the empty namespace), `_all` every
    namespace and cluster scope (as no namespace given: for a page that defaults to one)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault(
            "help_text",
            f"Exact namespace; `{CLUSTER_TOKEN}` for cluster scope (no namespace), `{ALL_NAMESPACES}` for all of them.",
        )
        super().__init__(*args, **kwargs)

    def filter(self, qs: QuerySet, value: str) -> QuerySet:
        if value == ALL_NAMESPACES:
            return qs
        if value == CLUSTER_TOKEN:
            # CharFilter skips an empty value, so the empty namespace is looked up here.
            return qs.filter(**{self.field_name: ""})
        return super().filter(qs, value)


class ListedValueFilter(filters.CharFilter):
    """Exact match on a column that holds one value (models) or a comma-joined list (runtimes:
    one value per supportedModelFormats entry)."""

    def filter(self, qs: QuerySet, value: str) -> QuerySet:
        if not value:
            return qs
        name = self.field_name
        listed = (
            Q(**{name: value})
            | Q(**{f"{name}__startswith": f"{value},"})
            | Q(**{f"{name}__endswith": f",{value}"})
            | Q(**{f"{name}__contains": f",{value},"})
        )
        return qs.filter(listed)


class StorageSchemeFilter(filters.CharFilter):
    """A model's storage scheme, given with or without `://` (hf, pvc, oci://)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("help_text", "e.g. hf, pvc, oci (with or without ://).")
        super().__init__(*args, **kwargs)

    def filter(self, qs: QuerySet, value: str) -> QuerySet:
        return super().filter(qs, value if not value or value.endswith("://") else f"{value}://")


def _kind_choices(kinds: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(kind, Kind(kind).label) for kind in kinds]


class ClusterFilter(filters.ModelChoiceFilter):
    def __init__(self, *args: object, **kwargs: object) -> None:
        # Evaluated per request: a cluster the reader may not read is not a valid choice.
        kwargs.setdefault("queryset", lambda request: clusters_visible(scope_of(request)))
        kwargs.setdefault("to_field_name", "name")
        kwargs.setdefault("help_text", "Cluster name.")
        kwargs.setdefault("error_messages", {"invalid_choice": "no cluster named %(value)r"})
        super().__init__(*args, **kwargs)


class ResourceFilterSet(filters.FilterSet):
    """What every inventory list filters on; without `cluster`, every cluster's objects."""

    cluster = ClusterFilter()
    namespace = NamespaceFilter()
    name = filters.CharFilter(help_text="Exact name.")
    search = filters.CharFilter(field_name="name", lookup_expr="icontains", help_text="Part of the name.")
    invalid = StrictBooleanFilter(
        method="filter_invalid", help_text="Only objects that cannot be evaluated (or only valid ones)."
    )

    class Meta:
        model = Resource
        fields: list[str] = []

    def filter_invalid(self, queryset: QuerySet[Resource], name: str, value: bool) -> QuerySet[Resource]:
        return queryset.exclude(error="") if value else queryset.filter(error="")


class ModelFilterSet(ResourceFilterSet):
    """ClusterBaseModels and BaseModels."""

    kind = filters.ChoiceFilter(choices=_kind_choices(MODEL_KINDS))
    model_format = ListedValueFilter(field_name="model_format", help_text="Model format name, e.g. safetensors.")
    model_architecture = ListedValueFilter(field_name="model_architecture", help_text="e.g. LlamaForCausalLM.")
    pipeline_class = ListedValueFilter(field_name="pipeline_class", help_text="diffusionPipeline className.")
    has_pipeline = StrictBooleanFilter(help_text="Has a diffusionPipeline.")
    storage_scheme = StorageSchemeFilter(field_name="storage_scheme")
    disabled = StrictBooleanFilter()


class RuntimeFilterSet(ResourceFilterSet):
    """ClusterServingRuntimes and ServingRuntimes; `format`, `architecture` and `pipeline_class`
    match any of a runtime's supportedModelFormats entries."""

    kind = filters.ChoiceFilter(choices=_kind_choices(RUNTIME_KINDS))
    model_format = ListedValueFilter(field_name="model_format", help_text="A supported model format name.")
    model_architecture = ListedValueFilter(field_name="model_architecture", help_text="A supported architecture.")
    pipeline_class = ListedValueFilter(field_name="pipeline_class", help_text="A required diffusionPipeline className.")
    has_pipeline = StrictBooleanFilter(help_text="Some entry requires a diffusionPipeline.")
    disabled = StrictBooleanFilter()


class InferenceServiceFilterSet(ResourceFilterSet):
    """InferenceServices."""


class SyncStateFilterSet(filters.FilterSet):
    cluster = ClusterFilter()
    kind = filters.ChoiceFilter(choices=Kind.choices)

    class Meta:
        model = SyncState
        fields: list[str] = []
