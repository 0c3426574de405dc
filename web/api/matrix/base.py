"""What every matrix API view shares: the OME behaviour headers and envelope, query flags, and
binding the cell FilterSet."""

from __future__ import annotations

from typing import Any

from django_filters import utils as filter_utils
from django_filters.filterset import FilterSet
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import matching
from access.current import scope_of
from core.api import ApiError, Pagination, api_keys
from core.web import CLUSTER_TOKEN
from inventory.models import Cluster
from inventory.ome_release import ome_description
from inventory.ome_release import ome_header as cluster_ome_header
from matrix import filters
from matrix.freshness import Freshness, cluster_freshness
from matrix.models import MatrixBuild
from matrix.paging import CELL_LISTS, CellList
from matrix.selectors import rows_visible
from matrix.updates import ome_behaviour_label
from web.api.matrix.serializers import build_data

OME_HEADER = "X-OME-Behaviour"
BUILD_HEADER = "X-OME-Build"


def ome_header(cluster: Cluster | None) -> str:
    """The profile that judged the cluster (the default profile when no cluster is known)."""
    if cluster is not None:
        return cluster_ome_header(cluster)
    return f"profile={matching.DEFAULT_BEHAVIOUR}; commit={matching.OME_BEHAVIOUR['commit']}; source=default"


def build_ome(build: MatrixBuild) -> dict[str, object]:
    """The `ome` of verdicts from `build`: the profile that produced them. When the cluster is
    judged by another profile now (set or detected since, the rebuild not done yet), that one
    is `pending`, never the label of the old verdicts."""
    current = ome_description(build.cluster)
    built = next(
        (item for item in matching.BEHAVIOURS.values() if ome_behaviour_label(item) == build.ome_behaviour), None
    )
    if built is None or built.name == current["profile"]:
        return current
    why = f"these verdicts were built with profile {built.name}; profile {current['profile']} is pending (the matrix is being rebuilt)"
    return {**built.to_dict(), "profile": built.name, "source": "build", "why": why, "pending": current}


def build_header(build: MatrixBuild) -> str:
    """The X-OME-Behaviour header of verdicts from `build` (see build_ome)."""
    ome = build_ome(build)
    return f"profile={ome['profile']}; commit={ome['commit']}; source={ome['source']}"


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
    return "" if raw == CLUSTER_TOKEN else raw


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
    freshness: Freshness | None = None

    def get_paginated_response(self, data: Any) -> Response:
        response = super().get_paginated_response(data)
        ome = build_ome(self.build) if self.build else api_keys(matching.OME_BEHAVIOUR)
        if self.build is not None and self.freshness is None:
            self.freshness = cluster_freshness(self.build.cluster)
        if self.request is None:
            raise RuntimeError("MatrixPagination: get_paginated_response called before paginate_queryset")
        envelope = {
            "ome": ome,
            "build": build_data(self.build, scope_of(self.request)) if self.build else None,
            "freshness": self.freshness.to_dict() if self.freshness else None,
        }
        response.data = {**envelope, **response.data}
        return response

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paged = super().get_paginated_response_schema(schema)
        # The components of core.schema.OmeBehaviourSerializer, serializers.BuildSerializer and
        # web.api.freshness.FreshnessSerializer.
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
            "freshness": {
                "allOf": [{"$ref": "#/components/schemas/Freshness"}],
                "nullable": True,
                "description": "How current the cluster's data is (matrix.freshness); null without a build.",
            },
            **paged["properties"],
        }
        paged["required"] = ["ome", "build", "freshness", *paged["required"]]
        return paged


class MatrixHeaders(APIView):
    """Adds the OME behaviour (and the build, once a view knows it) to every response's headers."""

    build: MatrixBuild | None = None

    def finalize_response(self, request: Request, response: Response, *args: Any, **kwargs: Any) -> Response:
        response = super().finalize_response(request, response, *args, **kwargs)
        response[OME_HEADER] = build_header(self.build) if self.build is not None else ome_header(None)
        if self.build is not None:
            response[BUILD_HEADER] = str(self.build.pk)
        return response


class MatrixView(MatrixHeaders, generics.GenericAPIView):
    pass


class CellFilterView(MatrixView):
    """A view over the cells that CellFilterSet selects."""

    filterset_class = filters.CellFilterSet
    filter_backends = [DjangoFilterBackend]

    def get_queryset(self) -> Any:
        return rows_visible(scope_of(self.request))

    def cell_list(self, request: Request) -> CellList:
        """The cells the query selects; sets `self.build` (a build the view read already is reused).

        The query is parsed once per build generation and reader: what the FilterSet selected
        is kept (matrix.paging.CELL_LISTS) and the next page of the same filters reuses it,
        counted and laid out. Like a cached page (conditional.py), it depends only on the build generation, the
        filters' parameters and the reader's rights. Only a query that parsed is kept, so every
        error is the FilterSet's."""
        requested = self.build
        owner = None
        if requested is not None:
            rights = scope_of(request).fingerprint()
            owner = ("api", requested.cluster_id, filter_query(request, self.filterset_class), rights)
            held = CELL_LISTS.peek(owner, requested.generation)
            if held is not None:
                return held
        backend, queryset = DjangoFilterBackend(), self.get_queryset()
        filterset_class = backend.get_filterset_class(self, queryset)
        filterset = filterset_class(**backend.get_filterset_kwargs(request, queryset, self))
        if not filterset.is_valid():
            raise filter_utils.translate_validation(filterset.errors)
        source = filterset.source(current=requested)
        self.build = built = source.build
        cells: CellList = filterset.cell_list(source)
        if owner is not None and requested is not None and built.pk == requested.pk:
            CELL_LISTS.get(owner, built.generation, lambda _stale: cells)
        return cells


def filter_query(request: Request, filterset_class: type[FilterSet]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The query parameters `filterset_class` reads (every one it declares), as a key."""
    params = request.query_params
    return tuple((name, tuple(params.getlist(name))) for name in sorted(filterset_class.base_filters) if name in params)
