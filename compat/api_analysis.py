"""The analysis API: what-if of edited manifests, runtime lint, InferenceService verdicts.

What-if is a POST because it carries manifests, but it changes nothing: it is open to whoever
may read (API_ANONYMOUS_READ), like the GET endpoints.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import matching
from inventory.models import Cluster
from inventory.services import cluster_choose
from ome_dashboard.api import ApiError
from ome_dashboard.permissions import CanRead

from .isvcs import isvc_verdicts
from .lint import lint_runtimes
from .whatif import WhatIfError, whatif


def _cluster(name: str | None) -> Cluster:
    return cluster_choose(name or None)


class ClusterQuerySerializer(serializers.Serializer):
    cluster = serializers.CharField(required=False, help_text="Cluster name; defaults to the only cluster.")


class WhatIfInputSerializer(serializers.Serializer):
    cluster = serializers.CharField(required=False, help_text="Cluster name; defaults to the only cluster.")
    manifests = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="Changed or new model and runtime manifests: YAML or JSON, several documents allowed.",
    )
    objects = serializers.ListField(
        child=serializers.DictField(), required=False, help_text="The same, as JSON objects."
    )
    deletions = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Objects to remove, as `Kind/name` or `Kind/ns/name`."
    )


class WhatIfView(APIView):
    """Which cells would change, and how, if these manifests were applied (nothing is applied)."""

    permission_classes = [CanRead]

    @extend_schema(request=WhatIfInputSerializer, responses=OpenApiTypes.OBJECT)
    def post(self, request: Request) -> Response:
        data = WhatIfInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        documents: Any = values.get("objects") or values.get("manifests") or ()
        try:
            result = whatif(_cluster(values.get("cluster")), documents, deletions=values.get("deletions", ()))
        except WhatIfError as error:
            raise ApiError(str(error), code="invalid_manifest", field=error.field or "manifests") from None
        return Response({"ome": matching.OME_BEHAVIOUR, **result.to_dict()})


class LintView(APIView):
    """Runtime lint findings of a cluster: shadowed runtimes, runtimes matching nothing, the
    diffusionPipeline risks of the seed page, OME scorer quirks, unmatchable values."""

    permission_classes = [CanRead]

    @extend_schema(parameters=[ClusterQuerySerializer], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        query = ClusterQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        report = lint_runtimes(_cluster(query.validated_data.get("cluster")))
        return Response({"ome": matching.OME_BEHAVIOUR, **report.to_dict()})


class InferenceServiceVerdictsView(APIView):
    """Each InferenceService: the runtime it names or OME would pick now, OME's error text when
    it fails, and whether OME would decide differently today than when it was created."""

    permission_classes = [CanRead]

    @extend_schema(parameters=[ClusterQuerySerializer], responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        query = ClusterQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        verdicts = isvc_verdicts(_cluster(query.validated_data.get("cluster")))
        return Response({"ome": matching.OME_BEHAVIOUR, "results": [verdict.to_dict() for verdict in verdicts]})


urlpatterns = [
    path("matrix/whatif/", WhatIfView.as_view(), name="matrix-whatif"),
    path("matrix/lint/", LintView.as_view(), name="matrix-lint"),
    path("inference-services/verdicts/", InferenceServiceVerdictsView.as_view(), name="isvc-verdicts"),
]

ROOT_ENDPOINTS = {
    "matrix/whatif": "matrix-whatif",
    "matrix/lint": "matrix-lint",
    "inference-services/verdicts": "isvc-verdicts",
}
