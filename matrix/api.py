"""The matrix's JSON API: cells (paged, exported), one cell's trace, a model's selection,
history and builds.

Every response here says which OME behaviour its verdicts follow: the `X-OME-Behaviour`
header (commit and date of `matching.OME_BEHAVIOUR`) and, for a published build, `X-OME-Build`;
JSON envelopes also carry `ome` (all of `matching.OME_BEHAVIOUR`) and `build`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar

from django.http import HttpResponseBase, StreamingHttpResponse
from django.urls import path
from django_filters import utils as filter_utils
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import generics, serializers, viewsets
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

import matching
from core.api import ApiError, Pagination
from core.web import CLUSTER_SCOPE
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Resource

from . import filters
from .models import CellChange, MatrixBuild, MatrixRow
from .selectors import (
    Cell,
    CellList,
    cell_change_list,
    cell_get,
    cell_reasoner,
    cell_trace,
    matrix_build_get,
    matrix_build_list,
    model_selection,
)

OME_HEADER = "X-OME-Behaviour"
BUILD_HEADER = "X-OME-Build"
Reasoner = Callable[[Cell], str | None]


def ome_header() -> str:
    return f"commit={matching.OME_BEHAVIOUR['commit']}; date={matching.OME_BEHAVIOUR['date']}"


# --- Serializers: output shapes (the cell shape is built by `cell_data`, used by pages and exports) ---


class OmeBehaviourSerializer(serializers.Serializer):
    commit = serializers.CharField(help_text="The OME commit whose runtime selection the verdicts follow.")
    date = serializers.CharField()
    summary = serializers.CharField()


class BuildSerializer(serializers.ModelSerializer):
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)

    class Meta:
        model = MatrixBuild
        fields = [
            "id",
            "cluster",
            "status",
            "trigger",
            "ome_behaviour",
            "started_at",
            "finished_at",
            "updated_at",
            "duration_ms",
            "models_count",
            "runtimes_count",
            "rows_count",
            "chunks",
            "chunks_done",
            "error",
        ]


class ObjectRefSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Resource id (/api/v1/models/{id}/ or /api/v1/runtimes/{id}/).")
    kind = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
    name = serializers.CharField()


class CellSerializer(serializers.Serializer):
    """Documents `cell_data`, which builds the same shape without a serializer per cell."""

    model = ObjectRefSerializer()
    runtime = ObjectRefSerializer()
    namespace = serializers.CharField(allow_blank=True, help_text='Namespace of the selection; "" is cluster scope.')
    status = serializers.ChoiceField(choices=filters.CellStatus.choices)
    score = serializers.IntegerField(allow_null=True, help_text="OME's score, for auto-selectable runtimes.")
    rank = serializers.IntegerField(allow_null=True, help_text="0 is OME's pick, then the order OME would prefer.")
    entry = serializers.IntegerField(allow_null=True, help_text="The first supportedModelFormats entry that matches.")
    reason = serializers.CharField(
        allow_null=True, required=False, help_text="Why not a match (absent unless reasons are asked for)."
    )


class EntryBreakdownSerializer(serializers.Serializer):
    entry = serializers.IntegerField()
    # The multiplication sign is matching's own text.
    breakdown = serializers.CharField(help_text="The arithmetic of the entry's score, e.g. `10 × 2 = 20`.")  # noqa: RUF001


class CellDetailSerializer(CellSerializer):
    ome = OmeBehaviourSerializer()
    build = BuildSerializer()
    check = serializers.JSONField(
        allow_null=True, help_text="matching.check(model, runtime).to_dict(): every entry's every check."
    )
    score_breakdown = EntryBreakdownSerializer(many=True)


class MatchSerializer(serializers.Serializer):
    name = serializers.CharField()
    score = serializers.IntegerField()
    isCluster = serializers.BooleanField()
    namespace = serializers.CharField(allow_blank=True)
    entry = serializers.IntegerField(allow_null=True)


class SelectionSerializer(serializers.Serializer):
    """Documents matching.Selection.to_dict()."""

    model = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
    selected = serializers.CharField(allow_null=True)
    compatible = MatchSerializer(many=True)
    excluded = serializers.DictField(child=serializers.CharField(), help_text="Runtime name -> OME's reason.")
    manualOnly = serializers.DictField(child=serializers.CharField())
    error = serializers.CharField(allow_null=True)


class ObjectKeySerializer(serializers.Serializer):
    kind = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
    name = serializers.CharField()


class CellChangeSerializer(serializers.ModelSerializer):
    cluster = serializers.SlugRelatedField(slug_field="name", read_only=True)
    model = serializers.SerializerMethodField()
    runtime = serializers.SerializerMethodField()

    class Meta:
        model = CellChange
        fields = ["id", "cluster", "changed_at", "namespace", "model", "runtime", "old_status", "new_status", "cause"]

    @staticmethod
    def _key(kind: str, namespace: str, name: str) -> dict[str, str]:
        return {"kind": kind, "namespace": namespace, "name": name}

    @extend_schema_field(ObjectKeySerializer)
    def get_model(self, change: CellChange) -> dict[str, str]:
        return self._key(change.model_kind, change.model_namespace, change.model_name)

    @extend_schema_field(ObjectKeySerializer)
    def get_runtime(self, change: CellChange) -> dict[str, str]:
        return self._key(change.runtime_kind, change.runtime_namespace, change.runtime_name)


def cell_data(cell: Cell, reason: Reasoner | None = None) -> dict[str, Any]:
    """One cell as the API shows it; `reason` is included when a reasoner is given."""
    model, runtime = cell.model, cell.runtime
    data: dict[str, Any] = {
        "model": {"id": model.pk, "kind": model.kind, "namespace": model.namespace, "name": model.name},
        "runtime": {"id": runtime.pk, "kind": runtime.kind, "namespace": runtime.namespace, "name": runtime.name},
        "namespace": cell.namespace,
        "status": cell.status,
        "score": cell.score,
        "rank": cell.rank,
        "entry": cell.entry,
    }
    if reason is not None:
        data["reason"] = reason(cell)
    return data


def build_data(build: MatrixBuild) -> dict[str, Any]:
    return dict(BuildSerializer(build).data)


# --- Query parsing shared by the views ---


def _flag(request: Request, name: str, *, default: bool) -> bool:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return bool(serializers.BooleanField().to_internal_value(raw))
    except serializers.ValidationError:
        raise ApiError(f"{name}: expected true or false, got {raw!r}", code="invalid", field=name) from None


def _namespace(raw: str | None) -> str | None:
    if raw is None or raw == "":
        return None
    return "" if raw == CLUSTER_SCOPE else raw


def _reasons_parameter(default: bool) -> OpenApiParameter:
    return OpenApiParameter(
        "reasons",
        OpenApiTypes.BOOL,
        description=f"Add each non-matching cell's one-line reason (default {str(default).lower()}).",
        default=default,
    )


class MatrixPagination(Pagination):
    """The page envelope of the matrix: `ome` and `build` beside count/next/previous/results."""

    build: MatrixBuild | None = None

    def get_paginated_response(self, data: Any) -> Response:
        response = super().get_paginated_response(data)
        envelope = {"ome": dict(matching.OME_BEHAVIOUR), "build": build_data(self.build) if self.build else None}
        response.data = {**envelope, **response.data}
        return response

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paged = super().get_paginated_response_schema(schema)
        paged["properties"] = {
            "ome": {
                "type": "object",
                "description": "matching.OME_BEHAVIOUR: the OME behaviour the verdicts follow.",
                "properties": {key: {"type": "string"} for key in ("commit", "date", "summary")},
            },
            "build": {"type": "object", "description": "The matrix build the cells come from (see /matrix/builds/)."},
            **paged["properties"],
        }
        paged["required"] = ["ome", "build", *paged["required"]]
        return paged


class MatrixHeaders:
    """Adds the OME behaviour (and the build, once a view knows it) to every response's headers."""

    build: MatrixBuild | None = None

    def finalize_response(
        self, request: Request, response: HttpResponseBase, *args: Any, **kwargs: Any
    ) -> HttpResponseBase:
        response = super().finalize_response(request, response, *args, **kwargs)  # type: ignore[misc]
        response[OME_HEADER] = ome_header()
        if self.build is not None:
            response[BUILD_HEADER] = str(self.build.pk)
        return response


class MatrixView(MatrixHeaders, generics.GenericAPIView):
    pass


class CellFilterView(MatrixView):
    """A view over the cells that CellFilterSet selects."""

    queryset = MatrixRow.objects.all()
    filterset_class = filters.CellFilterSet
    filter_backends: ClassVar[list[Any]] = [DjangoFilterBackend]

    def cell_list(self, request: Request) -> CellList:
        filterset = DjangoFilterBackend().get_filterset(request, self.get_queryset(), self)
        if not filterset.is_valid():
            raise filter_utils.translate_validation(filterset.errors)
        cells = filterset.cell_list()
        self.build = filterset.build
        return cells


class MatrixCellList(CellFilterView):
    """Cells of a cluster's current matrix, one per model x runtime in scope x namespace,
    ordered by namespace, model, runtime. Counting and paging read only the page's rows."""

    serializer_class = CellSerializer
    pagination_class = MatrixPagination

    @extend_schema(parameters=[_reasons_parameter(True)], responses=CellSerializer(many=True))
    def get(self, request: Request) -> Response:
        cells = self.cell_list(request)
        page = self.paginate_queryset(cells)
        assert page is not None
        assert self.build is not None
        reason = cell_reasoner(self.build) if _flag(request, "reasons", default=True) else None
        self.paginator.build = self.build
        return self.get_paginated_response([cell_data(cell, reason) for cell in page])


class _JsonErrors(BaseContentNegotiation):
    """Exports stream their own content type; anything DRF renders (errors) is JSON, whatever
    the client accepts (a spreadsheet may ask for text/csv only)."""

    def select_parser(self, request: Request, parsers: list[Any]) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(
        self, request: Request, renderers: list[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        return renderers[0], renderers[0].media_type


def _neutralised(value: object) -> object:
    """Spreadsheets run a cell starting with = + - @ (or tab, CR) as a formula: quote it."""
    if isinstance(value, str) and value.startswith(("=", "+", "-", "@", "\t", "\r")):
        return "'" + value
    return value


CSV_COLUMNS = [
    "cluster",
    "namespace",
    "model_id",
    "model_kind",
    "model_namespace",
    "model_name",
    "runtime_id",
    "runtime_kind",
    "runtime_namespace",
    "runtime_name",
    "status",
    "score",
    "rank",
    "entry",
]


def _chunked(lines: Iterable[str], size: int = 500) -> Iterator[str]:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= size:
            yield "".join(batch)
            batch = []
    if batch:
        yield "".join(batch)


def csv_lines(cells: Iterable[Cell], cluster: str, reason: Reasoner | None) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)

    def line(values: Sequence[object]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([_neutralised(value) for value in values])
        return buffer.getvalue()

    yield line([*CSV_COLUMNS, "reason"] if reason else CSV_COLUMNS)
    for cell in cells:
        model, runtime = cell.model, cell.runtime
        values: list[object] = [
            cluster,
            cell.namespace,
            model.pk,
            model.kind,
            model.namespace,
            model.name,
            runtime.pk,
            runtime.kind,
            runtime.namespace,
            runtime.name,
            cell.status,
            cell.score,
            cell.rank,
            cell.entry,
        ]
        if reason:
            values.append(reason(cell) or "")
        yield line(values)


def json_lines(cells: Iterable[Cell], build: MatrixBuild, reason: Reasoner | None) -> Iterator[str]:
    head = {"ome": dict(matching.OME_BEHAVIOUR), "build": build_data(build), "cluster": build.cluster.name}
    yield json.dumps(head, default=str)[:-1] + ', "cells": ['
    for index, cell in enumerate(cells):
        yield ("\n" if index == 0 else ",\n") + json.dumps(cell_data(cell, reason))
    yield "\n]}\n"


class MatrixCellExport(CellFilterView):
    """The filtered matrix as a file, streamed: every cell, no pages."""

    content_negotiation_class = _JsonErrors
    media_type: ClassVar[str] = ""
    extension: ClassVar[str] = ""

    def lines(self, cells: CellList, reason: Reasoner | None) -> Iterator[str]:
        raise NotImplementedError

    def get(self, request: Request) -> StreamingHttpResponse:
        cells = self.cell_list(request)
        assert self.build is not None
        reason = cell_reasoner(self.build) if _flag(request, "reasons", default=False) else None
        response = StreamingHttpResponse(_chunked(self.lines(cells, reason)), content_type=self.media_type)
        commit = matching.OME_BEHAVIOUR["commit"][:8]
        filename = f"ome-matrix-{self.build.cluster.name}-build{self.build.pk}-ome{commit}.{self.extension}"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class MatrixCellCsv(MatrixCellExport):
    """CSV, one line per cell. Text that a spreadsheet would run as a formula is prefixed with '."""

    media_type = "text/csv; charset=utf-8"
    extension = "csv"

    def lines(self, cells: CellList, reason: Reasoner | None) -> Iterator[str]:
        assert self.build is not None
        return csv_lines(cells, self.build.cluster.name, reason)

    @extend_schema(
        operation_id="v1_matrix_cells_export_csv",
        filters=True,
        parameters=[_reasons_parameter(False)],
        responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV with a header line.")},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        return super().get(request)


class MatrixCellJson(MatrixCellExport):
    """JSON: `{"ome", "build", "cluster", "cells": [...]}`, cells as in the paged list."""

    media_type = "application/json"
    extension = "json"

    def lines(self, cells: CellList, reason: Reasoner | None) -> Iterator[str]:
        assert self.build is not None
        return json_lines(cells, self.build, reason)

    @extend_schema(
        operation_id="v1_matrix_cells_export_json",
        filters=True,
        parameters=[_reasons_parameter(False)],
        responses={(200, "application/json"): OpenApiResponse(OpenApiTypes.OBJECT, description="Every cell.")},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        return super().get(request)


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
        namespace = _namespace(query.validated_data.get("namespace"))
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
                "ome": dict(matching.OME_BEHAVIOUR),
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
            selection = model_selection(model.cluster, model.key, _namespace(query.validated_data.get("namespace")))
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


router = SimpleRouter()
router.register("matrix/builds", MatrixBuildViewSet, basename="matrix-build")
router.register("matrix/history", CellChangeViewSet, basename="cell-change")

urlpatterns = [
    path("matrix/cells/", MatrixCellList.as_view(), name="matrix-cells"),
    path("matrix/cells/export.csv", MatrixCellCsv.as_view(), name="matrix-cells-csv"),
    path("matrix/cells/export.json", MatrixCellJson.as_view(), name="matrix-cells-json"),
    path("matrix/cell/", MatrixCellDetail.as_view(), name="matrix-cell"),
    path("matrix/selection/", SelectionView.as_view(), name="matrix-selection"),
]

# For the API root: key -> url name.
ROOT_ENDPOINTS = {
    "matrix/cells": "matrix-cells",
    "matrix/cells/export.csv": "matrix-cells-csv",
    "matrix/cells/export.json": "matrix-cells-json",
    "matrix/cell": "matrix-cell",
    "matrix/selection": "matrix-selection",
}
