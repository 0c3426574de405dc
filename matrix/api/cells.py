"""The matrix API's reads: paged cells, one cell's trace, a model's selection, builds and history."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from core.api import ApiError
from core.web import CLUSTER_SCOPE
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Resource
from inventory.ome_release import ome_description

from .. import filters
from ..selectors import (
    cell_change_list,
    cell_get,
    cell_reasoner,
    cell_trace,
    matrix_build_get,
    matrix_build_list,
    model_selection,
)
from .base import (
    CellFilterView,
    MatrixHeaders,
    MatrixPagination,
    MatrixView,
    query_flag,
    query_namespace,
    reasons_parameter,
)
from .serializers import (
    BuildSerializer,
    CellChangeSerializer,
    CellDetailSerializer,
    CellSerializer,
    SelectionSerializer,
    build_data,
    cell_data,
)


class MatrixCellList(CellFilterView):
    """Cells of a cluster's current matrix, one per model x runtime in scope x namespace,
    ordered by namespace, model, runtime. Counting and paging read only the page's rows."""

    serializer_class = CellSerializer
    pagination_class = MatrixPagination

    @extend_schema(parameters=[reasons_parameter(True)], responses=CellSerializer(many=True))
    def get(self, request: Request) -> Response:
        cells = self.cell_list(request)
        paginator = self.paginator
        assert isinstance(paginator, MatrixPagination)
        assert self.build is not None
        paginator.build = self.build
        page = paginator.paginate_queryset(cells, request, view=self)
        reason = cell_reasoner(self.build) if query_flag(request, "reasons", default=True) else None
        return paginator.get_paginated_response([cell_data(cell, reason) for cell in page or ()])


class CellQuerySerializer(serializers.Serializer):
    model = serializers.PrimaryKeyRelatedField(
        queryset=Resource.objects.filter(kind__in=MODEL_KINDS), help_text="Model resource id."
    )
    runtime = serializers.PrimaryKeyRelatedField(
        queryset=Resource.objects.filter(kind__in=RUNTIME_KINDS), help_text="Runtime resource id."
    )
    namespace = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text=f"Namespace of the selection; `{CLUSTER_SCOPE}` for cluster scope. Default: the model's, else the runtime's.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["model"].cluster_id != attrs["runtime"].cluster_id:
            raise serializers.ValidationError({"runtime": ["The runtime belongs to another cluster than the model."]})
        return attrs


class MatrixCellDetail(MatrixView):
    """One cell: its status, score and rank in the current build, OME's reason when it is not
    a match, `matching.check`'s trace of every entry and check, and each entry's score arithmetic."""

    serializer_class = CellDetailSerializer

    @extend_schema(parameters=[CellQuerySerializer], responses=CellDetailSerializer)
    def get(self, request: Request) -> Response:
        query = CellQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        model, runtime = query.validated_data["model"], query.validated_data["runtime"]
        namespace = query_namespace(query.validated_data.get("namespace"))
        if namespace is None:
            namespace = model.namespace or runtime.namespace
        self.build = matrix_build_get(model.cluster)
        cell = cell_get(self.build, model=model, runtime=runtime, namespace=namespace)
        if cell is None:
            raise ApiError(
                f"no cell: {model} has no row in namespace {namespace!r} or {runtime} is not in its scope",
                code="no_cell",
                field="namespace",
                status=404,
            )
        trace = cell_trace(model.cluster, model.key, runtime.key)
        breakdown = [] if trace is None else [{"entry": i, "breakdown": text} for i, text in enumerate(trace.breakdown)]
        return Response(
            {
                "ome": ome_description(self.build.cluster),
                "build": build_data(self.build),
                **cell_data(cell, cell_reasoner(self.build)),
                "check": None if trace is None else trace.check.to_dict(),
                "score_breakdown": breakdown,
            }
        )


class SelectionQuerySerializer(serializers.Serializer):
    model = serializers.PrimaryKeyRelatedField(
        queryset=Resource.objects.filter(kind__in=MODEL_KINDS), help_text="Model resource id."
    )
    namespace = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text=f"Namespace to select in; `{CLUSTER_SCOPE}` for cluster scope. Default: the model's own.",
    )


class SelectionView(MatrixView):
    """OME's runtime selection for one stored model in one namespace, computed now from the
    stored inventory: exactly `matching.select(model, runtimes, namespace=...).to_dict()`."""

    serializer_class = SelectionSerializer

    @extend_schema(parameters=[SelectionQuerySerializer], responses=SelectionSerializer)
    def get(self, request: Request) -> Response:
        query = SelectionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        model = query.validated_data["model"]
        try:
            selection = model_selection(
                model.cluster, model.key, query_namespace(query.validated_data.get("namespace"))
            )
        except LookupError as error:
            raise ApiError(str(error), code="not_found", field="model", status=404) from None
        return Response(selection.to_dict())


class MatrixBuildViewSet(MatrixHeaders, viewsets.ReadOnlyModelViewSet):
    """Matrix builds: the current (newest succeeded) one per cluster, and any running."""

    queryset = matrix_build_list()
    serializer_class = BuildSerializer
    filterset_class = filters.MatrixBuildFilterSet
    ordering_fields = ["started_at", "finished_at"]


class CellChangeViewSet(MatrixHeaders, viewsets.ReadOnlyModelViewSet):
    """Cells whose status changed, newest first, with the inventory change that caused it
    (`cause` is empty for a full rebuild)."""

    queryset = cell_change_list()
    serializer_class = CellChangeSerializer
    filterset_class = filters.CellChangeFilterSet
    ordering_fields = ["changed_at"]
