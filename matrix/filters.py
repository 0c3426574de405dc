"""One FilterSet per matrix list (cells, history, builds), shared by the API and the HTML pages."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema_field

from access.current import scope_of
from core.errors import DomainError
from core.filtering import StrictBooleanFilter
from core.web import ALL_NAMESPACES, CLUSTER_TOKEN
from inventory.filters import ClusterFilter, ListedValueFilter, NamespaceFilter, StorageSchemeFilter
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Kind, Resource
from inventory.selectors import cluster_choose, resources_visible

from .counts import whole_cluster_list
from .models import CellChange, CellStatus, MatrixBuild, MatrixRow
from .outcomes import OUTCOME_CHOICES, outcome_filter
from .paging import CellList
from .selectors import matrix_build_get, matrix_namespaces, rows_visible


class NamespaceUnknown(DomainError, LookupError):
    """A namespace the cluster's matrix has no rows for: no model or ServingRuntime there (400
    on field "namespace", rather than an empty answer that reads as "nothing matches")."""

    code = "unknown_namespace"

    def __init__(self, cluster: Cluster, namespace: str, known: list[str]) -> None:
        self.known = known  # the namespaces with rows the reader reads, "" (cluster scope) first
        named = [name for name in known if name]
        listed = ", ".join(named[:20]) + (f" and {len(named) - 20} more" if len(named) > 20 else "")
        super().__init__(
            f"namespace {namespace!r} has no rows in the matrix of cluster {cluster.name!r}: no model or "
            f"ServingRuntime is there. Namespaces with rows: {listed or 'none'} (or {CLUSTER_TOKEN} for cluster scope)",
            field="namespace",
        )


@dataclass(frozen=True)
class CellSource:
    """Where a query's cells come from: the cluster it names (or the only one) and its current build."""

    cluster: Cluster
    build: MatrixBuild


class RowNamespaceFilter(NamespaceFilter):
    """A namespace of the matrix's rows; `_all` the whole cluster, each model once where it
    lives, and (unless filtered by outcome, as a count's link is) a ClusterBaseModel again
    where a namespace decides differently (`counts.whole_cluster_list`)."""

    def filter(self, qs: QuerySet, value: str) -> QuerySet:
        if value == ALL_NAMESPACES:
            by_outcome = bool(self.parent.form.cleaned_data.get("outcome"))
            return whole_cluster_list(qs, scope=scope_of(self.parent.request), by_outcome=by_outcome)
        return super().filter(qs, value)


MODEL_KIND_CHOICES = [(kind, Kind(kind).label) for kind in MODEL_KINDS]
RUNTIME_KIND_CHOICES = [(kind, Kind(kind).label) for kind in RUNTIME_KINDS]


def _resource_choice(kinds: tuple[str, ...], help_text: str, **kwargs: object) -> filters.ModelChoiceFilter:
    choice = filters.ModelChoiceFilter(
        queryset=lambda request: resources_visible(scope_of(request)).filter(kind__in=kinds),
        help_text=help_text,
        **kwargs,
    )
    # The schema shows the id a client sends, not the choice field's string.
    return extend_schema_field({"type": "integer", "description": help_text})(choice)


class CellFilterSet(filters.FilterSet):
    """The cells of one cluster's current matrix (the only cluster when `cluster` is not given).

    Side-effect free: `.qs` is the rows the filters keep, of every build. Bind it to the query,
    check `is_valid()`, then `source()` names the cluster and build (raising ClusterChoiceError,
    MatrixMissing or NamespaceUnknown) and `cell_list(source)` gives the cells. `runtime*` and
    `status` pick cells within rows, so they travel to the CellList.
    """

    cluster = ClusterFilter(help_text="Cluster name; defaults to the only cluster.")
    namespace = RowNamespaceFilter()
    model = _resource_choice(MODEL_KINDS, "Model resource id.")
    model_name = filters.CharFilter(field_name="model__name", help_text="Exact model name.")
    model_kind = filters.ChoiceFilter(field_name="model__kind", choices=MODEL_KIND_CHOICES)
    # The model's facts, as inventory.filters.ModelFilterSet filters models.
    search = filters.CharFilter(
        field_name="model__name", lookup_expr="icontains", help_text="Part of the model's name."
    )
    model_format = ListedValueFilter(
        field_name="model__model_format", help_text="The model's format, e.g. safetensors."
    )
    model_architecture = ListedValueFilter(
        field_name="model__model_architecture", help_text="The model's architecture, e.g. LlamaForCausalLM."
    )
    pipeline_class = ListedValueFilter(
        field_name="model__pipeline_class", help_text="The model's diffusionPipeline className."
    )
    has_pipeline = StrictBooleanFilter(field_name="model__has_pipeline", help_text="The model has a diffusionPipeline.")
    storage_scheme = StorageSchemeFilter(field_name="model__storage_scheme")
    runtime = _resource_choice(RUNTIME_KINDS, "Runtime resource id.", method="filter_runtime")
    runtime_name = filters.CharFilter(method="filter_runtime_name", help_text="Exact runtime name.")
    runtime_kind = filters.ChoiceFilter(method="filter_runtime_kind", choices=RUNTIME_KIND_CHOICES)
    status = filters.MultipleChoiceFilter(
        method="filter_status", choices=CellStatus.choices, help_text="Cell status; repeat for several."
    )
    outcome = filters.ChoiceFilter(choices=OUTCOME_CHOICES, method="filter_outcome", help_text="Row outcome.")

    class Meta:
        model = MatrixRow
        fields: list[str] = []

    def source(self, current: MatrixBuild | None = None) -> CellSource:
        """The cluster and current build the cells come from (`current`, a current build the
        caller read already, saves a query when it is the cluster's)."""
        scope = scope_of(self.request)
        cluster = self.form.cleaned_data.get("cluster") or cluster_choose(None, default="only", scope=scope)
        build = current if current is not None and current.cluster_id == cluster.pk else matrix_build_get(cluster)
        namespace = self.form.cleaned_data.get("namespace")
        if namespace and namespace not in (CLUSTER_TOKEN, ALL_NAMESPACES):
            known = matrix_namespaces(build, scope=scope)
            if namespace not in known:
                raise NamespaceUnknown(cluster, namespace, known)
        return CellSource(cluster, build)

    def filter_queryset(self, queryset: QuerySet[MatrixRow]) -> QuerySet[MatrixRow]:
        # The rows the caller gave, as far as the reader reads them.
        return super().filter_queryset(queryset & rows_visible(scope_of(self.request)))

    def filter_runtime(self, queryset: QuerySet[MatrixRow], name: str, value: Resource) -> QuerySet[MatrixRow]:
        # A ServingRuntime is in scope in its own namespace only.
        return queryset.filter(namespace=value.namespace) if value.kind == Kind.SERVING_RUNTIME else queryset

    def filter_runtime_name(self, queryset: QuerySet[MatrixRow], name: str, value: str) -> QuerySet[MatrixRow]:
        return queryset

    def filter_runtime_kind(self, queryset: QuerySet[MatrixRow], name: str, value: str) -> QuerySet[MatrixRow]:
        return queryset.exclude(namespace="") if value == Kind.SERVING_RUNTIME else queryset

    def filter_status(self, queryset: QuerySet[MatrixRow], name: str, value: list[str]) -> QuerySet[MatrixRow]:
        if value and set(value) <= {CellStatus.SELECTED, CellStatus.COMPATIBLE}:
            return queryset.filter(outcome=MatrixRow.Outcome.SELECTED)
        return queryset

    def filter_outcome(self, queryset: QuerySet[MatrixRow], name: str, value: str) -> QuerySet[MatrixRow]:
        return outcome_filter(queryset, value)

    def runtime_ids(self, cluster: Cluster) -> set[int] | None:
        """The runtimes of `cluster` the filters allow; None when they allow all."""
        data = self.form.cleaned_data
        runtime, name, kind = data.get("runtime"), data.get("runtime_name"), data.get("runtime_kind")
        if not (runtime or name or kind):
            return None
        runtimes = resources_visible(scope_of(self.request)).filter(cluster=cluster, kind__in=RUNTIME_KINDS)
        if runtime:
            runtimes = runtimes.filter(pk=runtime.pk)
        if name:
            runtimes = runtimes.filter(name=name)
        if kind:
            runtimes = runtimes.filter(kind=kind)
        return set(runtimes.values_list("pk", flat=True))

    def cell_list(self, source: CellSource, rows: QuerySet[MatrixRow] | None = None) -> CellList:
        """The cells of `source`'s build in the rows the filters keep (or in `rows`, narrowed further)."""
        rows = (self.qs if rows is None else rows).filter(build=source.build)
        return CellList(
            source.build,
            rows,
            runtime_ids=self.runtime_ids(source.cluster),
            statuses=self.form.cleaned_data.get("status") or (),
        )


class CellChangeFilterSet(filters.FilterSet):
    """Cell history, newest first. History names objects by kind/namespace/name (they may be
    gone); `model` and `runtime` ids are looked up and matched by that identity."""

    cluster = ClusterFilter()
    namespace = NamespaceFilter()
    model = _resource_choice(MODEL_KINDS, "Model resource id.", method="filter_model")
    model_name = filters.CharFilter(help_text="Exact model name.")
    model_kind = filters.ChoiceFilter(choices=MODEL_KIND_CHOICES)
    runtime = _resource_choice(RUNTIME_KINDS, "Runtime resource id.", method="filter_runtime")
    runtime_name = filters.CharFilter(help_text="Exact runtime name.")
    runtime_kind = filters.ChoiceFilter(choices=RUNTIME_KIND_CHOICES)
    status = filters.MultipleChoiceFilter(field_name="new_status", choices=CellStatus.choices, help_text="New status.")
    since = filters.IsoDateTimeFilter(
        field_name="changed_at", lookup_expr="gte", help_text="Changed at or after (ISO 8601)."
    )

    class Meta:
        model = CellChange
        fields: list[str] = []

    def filter_model(self, queryset: QuerySet[CellChange], name: str, value: Resource) -> QuerySet[CellChange]:
        return queryset.filter(
            cluster_id=value.cluster_id, model_kind=value.kind, model_namespace=value.namespace, model_name=value.name
        )

    def filter_runtime(self, queryset: QuerySet[CellChange], name: str, value: Resource) -> QuerySet[CellChange]:
        return queryset.filter(
            cluster_id=value.cluster_id,
            runtime_kind=value.kind,
            runtime_namespace=value.namespace,
            runtime_name=value.name,
        )


class MatrixBuildFilterSet(filters.FilterSet):
    cluster = ClusterFilter()
    status = filters.ChoiceFilter(choices=MatrixBuild.Status.choices)

    class Meta:
        model = MatrixBuild
        fields: list[str] = []
