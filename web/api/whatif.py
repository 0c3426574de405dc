"""The what-if endpoints: which cells would change if these manifests were applied, and a
model's near misses with their fixes.

What-if is a POST because it carries manifests, but it changes nothing: it is open to whoever
may read (API_ANONYMOUS_READ), like the GET endpoints.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

import matching
from access.current import scope_of
from core.api import namespace_tokens
from core.permissions import CanRead
from core.web import CLUSTER_TOKEN, namespace_from_token, namespace_token
from inventory.models import MODEL_KINDS, RUNTIME_KINDS
from inventory.selectors import cluster_choose, resources_visible
from web.api.freshness import verdicts_envelope
from web.api.whatif_responses import NearMissesSerializer, WhatIfSerializer
from whatif.errors import WhatIfError, problems_response
from whatif.fixes import model_near_misses
from whatif.services import whatif


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
    lenient = serializers.BooleanField(
        default=False,
        help_text="Schema errors (fields of another OME version) are warnings, not a 400.",
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
        scope = scope_of(request)
        cluster = cluster_choose(values.get("cluster"), default="only", scope=scope)
        try:
            result = whatif(
                cluster, documents, deletions=values.get("deletions", ()), lenient=values["lenient"], scope=scope
            )
        except WhatIfError as error:
            return problems_response(error)
        return Response({**verdicts_envelope(cluster), **namespace_tokens(result.to_dict())})


@extend_schema_field(OpenApiTypes.INT)
class VisibleResourceField(serializers.PrimaryKeyRelatedField):
    """An id of an object of `kinds` that the request's reader reads: any other id, of a hidden
    object or of none, gets the same "does not exist" answer."""

    def __init__(self, *, kinds: tuple[str, ...], **kwargs: Any) -> None:
        self.kinds = kinds
        super().__init__(**kwargs)

    def get_queryset(self) -> Any:
        return resources_visible(scope_of(self.context["request"])).filter(kind__in=self.kinds)


class NearMissQuerySerializer(serializers.Serializer):
    model = VisibleResourceField(kinds=MODEL_KINDS, help_text="Model resource id.")
    namespace = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text=f"Namespace of the selection; `{CLUSTER_TOKEN}` for cluster scope. Default: the model's.",
    )
    runtime = VisibleResourceField(
        kinds=RUNTIME_KINDS, required=False, help_text="Only this runtime (any cell, on request)."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        runtime = attrs.get("runtime")
        if runtime is not None and runtime.cluster_id != attrs["model"].cluster_id:
            raise serializers.ValidationError({"runtime": "the runtime belongs to another cluster than the model"})
        return attrs


class NearMissView(APIView):
    """The runtimes OME does not auto-select for a model in one namespace, closest first (by
    the number of failed checks), each with its failed checks and, for the closest, verified
    fixes: JSON patch operations (or a new runtime's manifest), the `kubectl` commands, and what
    each would change in the whole matrix (from the what-if). `fixes` ranks them all, best
    first; `unserved` names the recorded fact no runtime accepts, when none does. Nothing is
    applied."""

    permission_classes = [CanRead]

    @extend_schema(parameters=[NearMissQuerySerializer], responses=NearMissesSerializer)
    def get(self, request: Request) -> Response:
        query = NearMissQuerySerializer(data=request.query_params, context={"request": request})
        query.is_valid(raise_exception=True)
        model = query.validated_data["model"]
        default = model.namespace if model.kind == "BaseModel" else ""
        token = query.validated_data.get("namespace")
        namespace = namespace_from_token(token) if token else default
        found = model_near_misses(model, namespace, query.validated_data.get("runtime"), scope=scope_of(request))
        return Response(
            {
                **verdicts_envelope(model.cluster),
                "model": namespace_tokens({**matching.key_dict(model.key), "id": model.pk}),
                "namespace": namespace_token(namespace),
                **namespace_tokens(found.to_dict()),
            }
        )
