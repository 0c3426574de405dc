"""The fleet from the API: `GET /api/v1/fleet/` (clusters' counts and the model rows, paged,
disagreeing first, each with the reason) and `GET /api/v1/fleet/runtimes/` (each runtime's
reach). Only clusters the caller may read are included."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import matching
from access.current import scope_of
from core.api import Pagination, namespace_tokens
from core.permissions import CanRead
from fleet.services import cell_dict, cluster_counts, fleet_get, rows_matching
from web.api.fleet_responses import FleetRuntimesSerializer, FleetSerializer


class FleetQuerySerializer(serializers.Serializer):
    q = serializers.CharField(required=False, allow_blank=True, default="", help_text="Part of a model name.")
    only = serializers.ChoiceField(choices=["all", "disagree"], default="all")


class FleetView(APIView):
    """Every cluster side by side: counts per cluster; OME's pick and score per model and namespace."""

    permission_classes = [CanRead]

    @extend_schema(parameters=[FleetQuerySerializer], responses=FleetSerializer)
    def get(self, request: Request) -> Response:
        query = FleetQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        fleet = fleet_get(scope=scope_of(request))
        rows = rows_matching(
            fleet.rows, text=query.validated_data["q"], disagree_only=query.validated_data["only"] == "disagree"
        )
        paginator = Pagination()
        page = paginator.paginate_queryset(rows, request, self) or []
        body = paginator.get_paginated_response(
            [
                {
                    "model": matching.key_dict(row.model),
                    "namespace": row.namespace,
                    "same_in_every_namespace": row.everywhere,
                    "disagree": row.disagree,
                    "reasons": fleet.reasons(row) if row.disagree else [],
                    "clusters": {name: cell_dict(cell) for name, cell in row.cells.items()},
                }
                for row in page
            ]
        ).data
        body["clusters"] = [cluster_counts(item, scope=scope_of(request)).to_dict() for item in fleet.clusters]
        body["disagreeing"] = fleet.disagreeing
        return Response(namespace_tokens(body))


class FleetRuntimesView(APIView):
    """Each runtime's reach: in how many clusters, and for how many models, it is OME's pick."""

    permission_classes = [CanRead]

    @extend_schema(responses=FleetRuntimesSerializer)
    def get(self, request: Request) -> Response:
        fleet = fleet_get(scope=scope_of(request))
        return Response(
            namespace_tokens(
                {
                    "clusters": [item.name for item in fleet.clusters],
                    "runtimes": [
                        {
                            "runtime": matching.key_dict(reach.runtime),
                            "clusters": reach.clusters,
                            "models": reach.total,
                            "models_by_cluster": reach.models,
                            "definition_differs": reach.differs,
                        }
                        for reach in fleet.reach
                    ],
                }
            )
        )
