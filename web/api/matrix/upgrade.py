"""`GET /api/v1/matrix/upgrade/?cluster=NAME&to=PROFILE`: what another OME (by default the
newest) would decide differently in a cluster than the OME that judges it now."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response

import matching
from access.current import scope_of
from core.api import namespace_tokens
from core.permissions import CanRead
from inventory.ome_release import ome_header
from matrix.upgrade import upgrade_report
from web.api.freshness import verdicts_envelope
from web.api.inventory import ClusterQuerySerializer
from web.api.matrix.base import OME_HEADER
from web.api.matrix.serializers import UpgradeSerializer


class UpgradeView(generics.GenericAPIView):
    """Every cell (verdict, score, crash), runtime pick (per model and namespace) and
    InferenceService (verdict, runtime, score, error) that `to` decides differently from the
    profile that judges the cluster, each with the behaviours that cause it (`causes`,
    `explanation`)."""

    permission_classes = [CanRead]

    @extend_schema(
        parameters=[
            ClusterQuerySerializer,
            OpenApiParameter(
                "to",
                OpenApiTypes.STR,
                description=f"The profile to compare with: one of {', '.join(matching.BEHAVIOURS)} "
                f"(default {matching.NEWEST_BEHAVIOUR}, the newest).",
            ),
        ],
        responses=UpgradeSerializer,
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        scope = scope_of(request)
        cluster = ClusterQuerySerializer(data=request.query_params).chosen_cluster(scope)
        report = upgrade_report(cluster, request.query_params.get("to"), scope=scope)
        response = Response({**verdicts_envelope(cluster), **namespace_tokens(report.to_dict())})
        response[OME_HEADER] = ome_header(cluster)
        return response
