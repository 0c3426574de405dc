"""The InferenceService verdicts endpoint."""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from access.current import scope_of
from core.api import scope_tokens
from core.permissions import CanRead
from inventory.api import ClusterQuerySerializer
from inventory.freshness import verdicts_envelope

from .responses import IsvcVerdictListSerializer
from .services import isvc_verdicts


class InferenceServiceVerdictsView(APIView):
    """Each InferenceService: the runtime it names or OME would pick now, OME's error text when
    it fails, and whether OME would decide differently today than when it was created."""

    permission_classes = [CanRead]

    @extend_schema(parameters=[ClusterQuerySerializer], responses=IsvcVerdictListSerializer)
    def get(self, request: Request) -> Response:
        scope = scope_of(request)
        cluster = ClusterQuerySerializer(data=request.query_params).chosen_cluster(scope)
        verdicts = isvc_verdicts(cluster, scope=scope)
        results = scope_tokens([verdict.to_dict() for verdict in verdicts])
        return Response({**verdicts_envelope(cluster), "results": results})


urlpatterns = [
    path("inference-services/verdicts/", InferenceServiceVerdictsView.as_view(), name="isvc-verdicts"),
]
ROOT_ENDPOINTS = {"inference-services/verdicts": "isvc-verdicts"}
