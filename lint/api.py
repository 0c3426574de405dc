"""The lint endpoint: findings about a cluster's runtimes."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.permissions import CanRead
from inventory.api import ClusterQuerySerializer
from inventory.ome_release import ome_description

from .selectors import lint_report_get


class LintView(APIView):
    """Runtime lint findings of a cluster: shadowed runtimes, runtimes matching nothing, the
    diffusionPipeline risks of the seed page, OME scorer quirks, unmatchable values."""

    permission_classes = [CanRead]

    @extend_schema(parameters=[ClusterQuerySerializer], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        cluster = ClusterQuerySerializer(data=request.query_params).chosen_cluster()
        report = lint_report_get(cluster)
        return Response({"ome": ome_description(cluster), **report.to_dict()})


urlpatterns = [path("matrix/lint/", LintView.as_view(), name="matrix-lint")]
ROOT_ENDPOINTS = {"matrix/lint": "matrix-lint"}
