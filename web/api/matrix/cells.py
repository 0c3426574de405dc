"""The matrix API's reads: paged cells, one cell's trace, a model's selection, builds and history."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from access.current import scope_of
from core.api import ApiError, api_keys
from matrix import filters
from matrix.freshness import cluster_freshness, cluster_freshness_data
from matrix.selectors import (
    cell_change_list,
    cell_get,
    cell_reasoner,
    cell_trace,
    matrix_build_get,
    matrix_build_list,
    model_selection,
    selection_exclusions,
)
from web.api.matrix.base import (
    CellFilterView,
    MatrixHeaders,
    MatrixPagination,
    MatrixView,
    build_ome,
    query_flag,
    query_namespace,
    reasons_parameter,
)
from web.api.matrix.conditional import held_page, made_page, page_key, requested_build
from web.api.matrix.lookup import CellQuerySerializer, SelectionQuerySerializer
from web.api.matrix.serializers import (
    BuildSerializer,
    CellChangeSerializer,
    CellDetailSerializer,
    CellSerializer,
    SelectionSerializer,
    build_data,
    cell_data,
    score_data,
    selection_data,
)


class MatrixCellList(CellFilterView):
    """Cells of a cluster's current matrix, one per model x runtime in scope x namespace,
    ordered by namespace, model, runtime. Counting and paging read only the page's rows."""

    serializer_class = CellSerializer
    pagination_class = MatrixPagination

    @extend_schema(parameters=[reasons_parameter(True)], responses=CellSerializer(many=True))
    def get(self, request: Request) -> Response:
        key = page_key(request)
        requested = self.build = requested_build(request)
        freshness = None if requested is None else cluster_freshness(requested.cluster, build=requested)
        if requested is not None and freshness is not None:
            held = held_page(request, requested, key, freshness)
            if held is not None:
                return held
        cells = self.cell_list(request)
        built = cells.build  # the build the page is made from
        if freshness is None or requested is None or built.pk != requested.pk:
            freshness = cluster_freshness(built.cluster, build=built)
        paginator = self.paginator
        if not isinstance(paginator, MatrixPagination):
            raise TypeError(f"{type(self).__name__} pages with {type(paginator).__name__}, not MatrixPagination")
        paginator.build, paginator.freshness = built, freshness
        page = paginator.paginate_queryset(cells, request, view=self)
        reason = cell_reasoner(built, scope=scope_of(request)) if query_flag(request, "reasons", default=True) else None
        response = paginator.get_paginated_response([cell_data(cell, reason) for cell in page or ()])
        return made_page(built, key, dict(response.data), freshness)


class MatrixCellDetail(MatrixView):
    """One cell: its status, score and rank in the current build, OME's reason when it is not
    a match, `matching.check`'s trace of every entry and check, and each entry's score arithmetic."""

    serializer_class = CellDetailSerializer

    @extend_schema(parameters=[CellQuerySerializer], responses=CellDetailSerializer)
    def get(self, request: Request) -> Response:
        query = CellQuerySerializer(data=request.query_params, context={"request": request})
        query.is_valid(raise_exception=True)
        model, runtime = query.validated_data["model"], query.validated_data["runtime"]
        namespace = query_namespace(query.validated_data.get("namespace"))
        if namespace is None:
            namespace = model.namespace or runtime.namespace
        self.build = matrix_build_get(model.cluster)
        cell = cell_get(self.build, model=model, runtime=runtime, namespace=namespace, scope=scope_of(request))
        if cell is None:
            raise ApiError(
                f"no cell: {model} has no row in namespace {namespace!r} or {runtime} is not in its scope",
                code="no_cell",
                field="namespace",
                status=404,
            )
        trace = cell_trace(model.cluster, model.key, runtime.key, scope=scope_of(request))
        return Response(
            {
                "ome": build_ome(self.build),
                "build": build_data(self.build, scope_of(request)),
                "freshness": cluster_freshness_data(self.build.cluster),
                **cell_data(cell, cell_reasoner(self.build, scope=scope_of(request))),
                "check": None if trace is None else api_keys(trace.check.to_dict()),
                "score_breakdown": [] if trace is None else score_data(trace),
            }
        )


class SelectionView(MatrixView):
    """OME's runtime selection for one stored model in one namespace, computed now from the
    stored inventory (`matching.select`), every runtime named by kind, namespace and name."""

    serializer_class = SelectionSerializer

    @extend_schema(parameters=[SelectionQuerySerializer], responses=SelectionSerializer)
    def get(self, request: Request) -> Response:
        query = SelectionQuerySerializer(data=request.query_params, context={"request": request})
        query.is_valid(raise_exception=True)
        model = query.validated_data["model"]
        namespace = query_namespace(query.validated_data.get("namespace"))
        try:
            selection = model_selection(model.cluster, model.key, namespace, scope=scope_of(request))
        except LookupError as error:
            raise ApiError(str(error), code="not_found", field="model", status=404) from None
        excluded = selection_exclusions(model.cluster, model.key, namespace, scope=scope_of(request))
        return Response(selection_data(model.key, selection, excluded))


class MatrixBuildViewSet(MatrixHeaders, viewsets.ReadOnlyModelViewSet):
    """Matrix builds: the current (newest succeeded) one per cluster, and any running."""

    serializer_class = BuildSerializer
    filterset_class = filters.MatrixBuildFilterSet
    ordering_fields = ["started_at", "finished_at"]

    def get_queryset(self) -> Any:
        return matrix_build_list(scope_of(self.request))

    def get_serializer_context(self) -> dict[str, Any]:
        return {**super().get_serializer_context(), "scope": scope_of(self.request)}


class CellChangeViewSet(MatrixHeaders, viewsets.ReadOnlyModelViewSet):
    """Cells whose status changed, newest first, with the inventory change that caused it
    (`cause` is empty for a full rebuild)."""

    serializer_class = CellChangeSerializer
    filterset_class = filters.CellChangeFilterSet
    ordering_fields = ["changed_at"]

    def get_queryset(self) -> Any:
        return cell_change_list(scope_of(self.request))
