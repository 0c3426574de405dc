"""The what-if endpoints: which cells would change if these manifests were applied, and a
model's near misses with their fixes.

What-if is a POST because it carries manifests, but it changes nothing: it is open to whoever
may read (API_ANONYMOUS_READ), like the GET endpoints.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import matching
from core.api import scope_tokens
from core.permissions import CanRead
from core.web import CLUSTER_SCOPE, scope_namespace, scope_token
from inventory.models import MODEL_KINDS, RUNTIME_KINDS, Resource
from inventory.ome_release import ome_description
from inventory.selectors import cluster_choose

from .errors import WhatIfError
from .fixes import model_near_misses
from .responses import NearMissesSerializer, WhatIfSerializer
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
    throttle_scope = "whatif"

    @extend_schema(request=WhatIfInputSerializer, responses=WhatIfSerializer)
    def post(self, request: Request) -> Response:
        data = WhatIfInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        documents: Any = values.get("objects") or values.get("manifests") or ()
        cluster = cluster_choose(values.get("cluster"), default="only")
        try:
            result = whatif(cluster, documents, deletions=values.get("deletions", ()))
        except WhatIfError as error:
            # An error without a field is about the manifests; every schema problem is listed.
            error.field = error.field or "manifests"
            if not error.problems:
                raise
            body = {"detail": str(error), "code": error.code, "field": error.field}
            return Response({**body, "problems": [problem.to_dict() for problem in error.problems]}, status=400)
        return Response({"ome": ome_description(cluster), **scope_tokens(result.to_dict())})


class NearMissQuerySerializer(serializers.Serializer):
    model = serializers.PrimaryKeyRelatedField(
        queryset=Resource.objects.filter(kind__in=MODEL_KINDS), help_text="Model resource id."
    )
    namespace = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text=f"Namespace of the selection; `{CLUSTER_SCOPE}` for cluster scope. Default: the model's.",
    )
    runtime = serializers.PrimaryKeyRelatedField(
        queryset=Resource.objects.filter(kind__in=RUNTIME_KINDS),
        required=False,
        help_text="Only this runtime (any cell, on request).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        runtime = attrs.get("runtime")
        if runtime is not None and runtime.cluster_id != attrs["model"].cluster_id:
            raise serializers.ValidationError({"runtime": "the runtime belongs to another cluster than the model"})
        return attrs


class NearMissView(APIView):
    """The runtimes OME does not auto-select for a model in one namespace, closest first (by
    the number of failed checks), each with its failed checks and, for the closest, verified
    fixes on either side: JSON patch operations, the `kubectl patch` commands, and what each
    would change in the whole matrix (from the what-if). Nothing is applied."""

    permission_classes = [CanRead]

    @extend_schema(parameters=[NearMissQuerySerializer], responses=NearMissesSerializer)
    def get(self, request: Request) -> Response:
        query = NearMissQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        model = query.validated_data["model"]
        default = model.namespace if model.kind == "BaseModel" else ""
        token = query.validated_data.get("namespace")
        namespace = scope_namespace(token) if token else default
        misses = model_near_misses(model, namespace, query.validated_data.get("runtime"))
        return Response(
            {
                "ome": ome_description(model.cluster),
                "model": scope_tokens({**matching.key_dict(model.key), "id": model.pk}),
                "namespace": scope_token(namespace),
                "near_misses": scope_tokens([miss.to_dict() for miss in misses]),
            }
        )


urlpatterns = [
    path("matrix/whatif/", WhatIfView.as_view(), name="matrix-whatif"),
    path("matrix/near-misses/", NearMissView.as_view(), name="matrix-near-misses"),
]
ROOT_ENDPOINTS = {"matrix/whatif": "matrix-whatif", "matrix/near-misses": "matrix-near-misses"}
