"""The what-if endpoint: which cells would change if these manifests were applied.

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

from core.permissions import CanRead
from inventory.ome_release import ome_description
from inventory.selectors import cluster_choose

from .errors import WhatIfError
from .services import whatif


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
        cluster = cluster_choose(values.get("cluster"), default="only")
        try:
            result = whatif(cluster, documents, deletions=values.get("deletions", ()))
        except WhatIfError as error:
            # The exception handler answers; an error without a field is about the manifests.
            error.field = error.field or "manifests"
            raise
        return Response({"ome": ome_description(cluster), **result.to_dict()})


urlpatterns = [path("matrix/whatif/", WhatIfView.as_view(), name="matrix-whatif")]
ROOT_ENDPOINTS = {"matrix/whatif": "matrix-whatif"}
