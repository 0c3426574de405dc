"""The filtered matrix as a file (CSV or JSON), streamed: every cell, no pages."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator, Sequence
from typing import ClassVar

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import BaseParser
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from access.current import scope_of
from access.scope import Scope
from core.web import namespace_token
from inventory.ome_release import judge
from matrix.cells import Cell
from matrix.freshness import cluster_freshness_data
from matrix.models import MatrixBuild
from matrix.paging import CellList
from matrix.selectors import cell_reasoner
from web.api.matrix.base import CellFilterView, build_ome, query_flag, reasons_parameter
from web.api.matrix.serializers import CellExportSerializer, Reasoner, build_data, cell_data


class _JsonErrors(BaseContentNegotiation):
    """Exports stream their own content type; anything DRF renders (errors) is JSON, whatever
    the client accepts (a spreadsheet may ask for text/csv only)."""

    def select_parser(self, request: Request, parsers: Iterable[BaseParser]) -> BaseParser | None:
        return next(iter(parsers), None)

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


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
            namespace_token(cell.namespace),
            model.pk,
            model.kind,
            namespace_token(model.namespace),
            model.name,
            runtime.pk,
            runtime.kind,
            namespace_token(runtime.namespace),
            runtime.name,
            cell.status,
            cell.score,
            cell.rank,
            cell.entry,
        ]
        if reason:
            values.append(reason(cell) or "")
        yield line(values)


def json_lines(cells: Iterable[Cell], build: MatrixBuild, reason: Reasoner | None, scope: Scope) -> Iterator[str]:
    head = {
        "ome": build_ome(build),
        "build": build_data(build, scope),
        "freshness": cluster_freshness_data(build.cluster),
        "cluster": build.cluster.name,
    }
    yield json.dumps(head, default=str)[:-1] + ', "cells": ['
    for index, cell in enumerate(cells):
        yield ("\n" if index == 0 else ",\n") + json.dumps(cell_data(cell, reason))
    yield "\n]}\n"


class MatrixCellExport(CellFilterView):
    """The filtered matrix as a file, streamed: every cell, no pages."""

    content_negotiation_class = _JsonErrors
    throttle_scope = "export"
    media_type: ClassVar[str] = ""
    extension: ClassVar[str] = ""

    def lines(self, cells: CellList, reason: Reasoner | None) -> Iterator[str]:
        raise NotImplementedError

    def get(self, request: Request) -> StreamingHttpResponse:
        cells = self.cell_list(request)
        built = cells.build
        reason = (
            cell_reasoner(built, scope=scope_of(request)) if query_flag(request, "reasons", default=False) else None
        )
        response = StreamingHttpResponse(_chunked(self.lines(cells, reason)), content_type=self.media_type)
        profile = judge(built.cluster).behaviour.name
        filename = f"ome-matrix-{built.cluster.name}-build{built.pk}-ome{profile}.{self.extension}"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response


class MatrixCellCsv(MatrixCellExport):
    """CSV, one line per cell. Text that a spreadsheet would run as a formula is prefixed with '."""

    media_type = "text/csv; charset=utf-8"
    extension = "csv"

    def lines(self, cells: CellList, reason: Reasoner | None) -> Iterator[str]:
        return csv_lines(cells, cells.build.cluster.name, reason)

    @extend_schema(
        operation_id="v1_matrix_cells_export_csv",
        filters=True,
        parameters=[reasons_parameter(False)],
        responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="CSV with a header line.")},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        return super().get(request)


class MatrixCellJson(MatrixCellExport):
    """JSON: `{"ome", "build", "freshness", "cluster", "cells": [...]}`, cells as in the paged list."""

    media_type = "application/json"
    extension = "json"

    def lines(self, cells: CellList, reason: Reasoner | None) -> Iterator[str]:
        return json_lines(cells, cells.build, reason, scope_of(self.request))

    @extend_schema(
        operation_id="v1_matrix_cells_export_json",
        filters=True,
        parameters=[reasons_parameter(False)],
        responses={(200, "application/json"): OpenApiResponse(CellExportSerializer, description="Every cell.")},
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        return super().get(request)
