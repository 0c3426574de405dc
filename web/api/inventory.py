"""The inventory's JSON API: clusters (with their sync state), models, runtimes, InferenceServices."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from access.current import scope_of
from access.scope import Scope
from core.api import NamespaceField
from core.redact import redacted
from inventory import filters, selectors
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Cluster, Kind, Resource, SyncState
from inventory.ome_release import ome_description
from inventory.selectors import cluster_choose
from inventory.services import RegistrationLeavesNoRole, cluster_register, cluster_spec_from_web
from matrix.freshness import cluster_freshness_data
from web.api.freshness import FreshnessSerializer

SOURCE_HELP = (
    "`kubeconfig:FILE[#CONTEXT]`: a file of the kubeconfig directory (OME_KUBECONFIG_DIR) and one of "
    "the contexts it defines. Credentials stay in the file: only its path and context are stored and "
    "shown. In-cluster and manifest-folder clusters are registered from settings or the command line."
)


class ClusterQuerySerializer(serializers.Serializer):
    """`?cluster=NAME` of the endpoints that read one cluster; without it, the only cluster."""

    cluster = serializers.CharField(required=False, help_text="Cluster name; defaults to the only cluster.")

    def chosen_cluster(self, scope: Scope) -> Cluster:
        self.is_valid(raise_exception=True)
        return cluster_choose(self.validated_data.get("cluster"), default="only", scope=scope)


class SyncStateSerializer(serializers.ModelSerializer):
    cluster: serializers.SlugRelatedField[Cluster] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    # As the reader sees them: a viewer of some namespaces counts only those (selectors.sync_state_list).
    count = serializers.IntegerField(source="visible_count", read_only=True)
    invalid = serializers.IntegerField(source="visible_invalid", read_only=True)
    watch_connected = serializers.BooleanField(
        source="watch_live",
        read_only=True,
        help_text="A watch is connected and its holder renewed its lease in time (see watch_lease_until).",
    )

    class Meta:
        model = SyncState
        fields = [
            "cluster",
            "kind",
            "count",
            "invalid",
            "last_list_at",
            "resource_version",
            "watch_connected",
            "watch_reconnects",
            "watch_lease_until",
            "watch_lost_at",
            "last_event_at",
            "last_error",
            "last_error_at",
            "rejected",
        ]


class ClusterSerializer(serializers.ModelSerializer):
    description = serializers.CharField(source="describe_source", read_only=True)
    sync = SyncStateSerializer(
        source="sync_by_kind", many=True, read_only=True, help_text="One entry per kind listed so far."
    )
    ome = serializers.SerializerMethodField(
        help_text="The OME behaviour profile that judges the cluster, and why (inventory.ome_release)."
    )

    class Meta:
        model = Cluster
        fields = ["name", "source", "description", "kubeconfig", "context", "manifests", "created_at", "sync", "ome"]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_ome(self, cluster: Cluster) -> dict[str, object]:
        return ome_description(cluster)


class ClusterDetailSerializer(ClusterSerializer):
    """One cluster: with how current what the dashboard shows of it is, as every other surface says."""

    freshness = serializers.SerializerMethodField(help_text="How current the cluster's data is (matrix.freshness).")

    class Meta(ClusterSerializer.Meta):
        fields = [*ClusterSerializer.Meta.fields, "freshness"]

    @extend_schema_field(FreshnessSerializer)
    def get_freshness(self, cluster: Cluster) -> dict[str, Any]:
        return cluster_freshness_data(cluster)


class ClusterCreateSerializer(serializers.Serializer):
    """Input of POST /clusters/: a name and a source, nothing else."""

    name = serializers.SlugField(max_length=63)
    # DRF's metaclass takes declared fields off the class; only the type checker sees Field.source.
    source = serializers.CharField(max_length=4096, help_text=SOURCE_HELP)  # type: ignore[assignment]

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                # A token or a whole kubeconfig pasted into the body is refused, never stored.
                raise serializers.ValidationError(
                    {
                        unknown[0]: [
                            "Unknown field: send `name` and `source` only; credentials are referenced by kubeconfig path."
                        ]
                    }
                )
        return dict(super().to_internal_value(data))


class ResourceSerializer(serializers.ModelSerializer):
    cluster: serializers.SlugRelatedField[Cluster] = serializers.SlugRelatedField(slug_field="name", read_only=True)
    namespace = NamespaceField(read_only=True, help_text="`_cluster` for a cluster-scoped kind.")

    class Meta:
        model = Resource
        fields = [
            "id",
            "cluster",
            "kind",
            "namespace",
            "name",
            "uid",
            "resource_version",
            "generation",
            "model_format",
            "model_architecture",
            "pipeline_class",
            "has_pipeline",
            "storage_scheme",
            "disabled",
            "error",
            "store_error",
            "first_seen",
            "last_seen",
        ]
        extra_kwargs = {
            "model_format": {"help_text": "Format name; for a runtime, its entries' names joined by commas."},
            "model_architecture": {"help_text": "Architecture; for a runtime, its entries' joined by commas."},
            "pipeline_class": {
                "help_text": "diffusionPipeline className; for a runtime, its entries' joined by commas."
            },
        }


class ResourceDetailSerializer(ResourceSerializer):
    redacted = serializers.SerializerMethodField(
        help_text="Whether `obj` holds values shown as `[redacted]`: credentials, never stored."
    )

    class Meta(ResourceSerializer.Meta):
        fields = [*ResourceSerializer.Meta.fields, "source_path", "obj", "redacted"]

    def get_redacted(self, resource: Resource) -> bool:
        return redacted(resource.obj)


class ClusterViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet
):
    """Registered clusters and how each kind of each was last synced. POST registers one
    (permission `inventory.add_cluster`); the next scheduled resync loads its objects."""

    serializer_class = ClusterSerializer
    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    filter_backends = ()
    write_permissions: ClassVar[dict[str, tuple[str, ...]]] = {"create": ("inventory.add_cluster",)}

    def get_queryset(self) -> Any:
        return selectors.cluster_list(scope_of(self.request))

    def get_serializer_class(self) -> type[serializers.BaseSerializer]:
        if self.action == "create":
            return ClusterCreateSerializer
        return ClusterDetailSerializer if self.action == "retrieve" else ClusterSerializer

    @extend_schema(request=ClusterCreateSerializer, responses={201: ClusterSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        given = ClusterCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        values = given.validated_data
        with transaction.atomic():
            cluster = cluster_register(cluster_spec_from_web(values["name"], values["source"], author=request.user))
            shown = self.get_queryset().filter(pk=cluster.pk).first()
            if shown is None:  # a grant revoked meanwhile: nothing stays registered
                raise RegistrationLeavesNoRole(f"You hold no role on cluster {cluster.name!r}.", field="name")
        return Response(ClusterSerializer(shown).data, status=status.HTTP_201_CREATED)


class SyncStateViewSet(viewsets.ReadOnlyModelViewSet):
    """The sync state of each kind of each cluster: last full list, watch, counts, last error."""

    serializer_class = SyncStateSerializer
    filterset_class = filters.SyncStateFilterSet
    ordering_fields = ["kind", "last_list_at", "last_event_at"]

    def get_queryset(self) -> Any:
        return selectors.sync_state_list(scope_of(self.request))


class ResourceViewSet(viewsets.ReadOnlyModelViewSet):
    kinds: ClassVar[tuple[str, ...]] = ()
    serializer_class = ResourceSerializer
    ordering_fields = ["id", "kind", "namespace", "name", "last_seen"]

    def get_queryset(self) -> Any:
        objects = selectors.resource_list(self.kinds, scope=scope_of(self.request))
        # The list leaves the object bodies out; one object comes whole.
        return objects if self.action == "list" else objects.defer(None)

    def get_serializer_class(self) -> type[serializers.BaseSerializer]:
        return ResourceSerializer if self.action == "list" else ResourceDetailSerializer


class ModelViewSet(ResourceViewSet):
    """ClusterBaseModels and BaseModels; one object includes its manifest (`obj`)."""

    kinds = MODEL_KINDS
    filterset_class = filters.ModelFilterSet


class RuntimeViewSet(ResourceViewSet):
    """ClusterServingRuntimes and ServingRuntimes; one object includes its manifest (`obj`)."""

    kinds = RUNTIME_KINDS
    filterset_class = filters.RuntimeFilterSet


class InferenceServiceViewSet(ResourceViewSet):
    """InferenceServices; one object includes its manifest (`obj`)."""

    kinds = (Kind.INFERENCE_SERVICE,)
    filterset_class = filters.InferenceServiceFilterSet
