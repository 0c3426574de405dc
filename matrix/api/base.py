"""What every matrix API view shares: the OME behaviour headers and envelope, query flags, and
binding the cell FilterSet."""

from __future__ import annotations

from typing import Any

from django_filters import utils as filter_utils
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import matching
from core.api import ApiError, Pagination, api_keys
from core.web import CLUSTER_SCOPE
from inventory.models import Cluster
from inventory.ome_release import ome_description
from inventory.ome_release import ome_header as cluster_ome_header

from .. import filters
from ..models import MatrixBuild, MatrixRow
from ..paging import CellList
from .serializers import build_data

OME_HEADER = "X-OME-Behaviour"
BUILD_HEADER = "X-OME-Build"


def ome_header(cluster: Cluster | None) -> str:
    """The profile that judged the cluster (the default profile when no cluster is known)."""
    if cluster is not None:
        return cluster_ome_header(cluster)
    return f"profile={matching.DEFAULT_BEHAVIOUR}; commit={matching.OME_BEHAVIOUR['commit']}; source=default"


def query_flag(request: Request, name: str, *, default: bool) -> bool:
    """A true/false query parameter; ApiError for anything else."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return bool(serializers.BooleanField().to_internal_value(raw))
    except serializers.ValidationError:
        raise ApiError(f"{name}: expected true or false, got {raw!r}", code="invalid", field=name) from None


def query_namespace(raw: str | None) -> str | None:
    """A namespace query parameter: None when not given, "" for cluster scope."""
    if raw is None or raw == "":
        return None
    return "" if raw == CLUSTER_SCOPE else raw


def reasons_parameter(default: bool) -> OpenApiParameter:
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
        ome = ome_description(self.build.cluster) if self.build else api_keys(matching.OME_BEHAVIOUR)
        envelope = {"ome": ome, "build": build_data(self.build) if self.build else None}
        response.data = {**envelope, **response.data}
        return response

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paged = super().get_paginated_response_schema(schema)
        # The components of core.schema.OmeBehaviourSerializer and serializers.BuildSerializer.
        paged["properties"] = {
            "ome": {
                "allOf": [{"$ref": "#/components/schemas/OmeBehaviour"}],
                "description": "The OME behaviour profile that judged the cluster, and why (inventory.ome_release).",
            },
            "build": {
                "allOf": [{"$ref": "#/components/schemas/Build"}],
                "nullable": True,
                "description": "The matrix build the cells come from (see /matrix/builds/).",
            },
            **paged["properties"],
        }
        paged["required"] = ["ome", "build", *paged["required"]]
        return paged


class MatrixHeaders(APIView):
    """Adds the OME behaviour (and the build, once a view knows it) to every response's headers."""

    build: MatrixBuild | None = None

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        response[OME_HEADER] = ome_header(self.build.cluster if self.build is not None else None)
        if self.build is not None:
            response[BUILD_HEADER] = str(self.build.pk)
        return response


class MatrixView(MatrixHeaders, generics.GenericAPIView):
    pass


class CellFilterView(MatrixView):
    """A view over the cells that CellFilterSet selects."""

    queryset = MatrixRow.objects.all()
    filterset_class = filters.CellFilterSet
    filter_backends = [DjangoFilterBackend]

    def cell_list(self, request: Request) -> CellList:
        """The cells the query selects; sets `self.build` (a build the view read already is reused)."""
        backend, queryset = DjangoFilterBackend(), self.get_queryset()
        filterset_class = backend.get_filterset_class(self, queryset)
        filterset = filterset_class(**backend.get_filterset_kwargs(request, queryset, self), current=self.build)
        if not filterset.is_valid():
            raise filter_utils.translate_validation(filterset.errors)
        cells = filterset.cell_list()
        self.build = filterset.build
        return cells
