"""The InferenceService verdicts endpoint."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from access.current import scope_of
from core.api import namespace_tokens
from core.permissions import CanRead
from isvcs.services import isvc_verdicts
from web.api.freshness import verdicts_envelope
from web.api.isvcs_filters import IsvcVerdictQuerySerializer
from web.api.isvcs_responses import IsvcVerdictListSerializer


class InferenceServiceVerdictsView(APIView):
    """Each InferenceService: the runtime it names or OME would pick now, OME's error text when
    it fails, whether OME would decide differently today than when it was created, whether OME
    silently ignores it, and whether it waits for a re-apply after a model change."""

    permission_classes = [CanRead]

    @extend_schema(parameters=[IsvcVerdictQuerySerializer], responses=IsvcVerdictListSerializer)
    def get(self, request: Request) -> Response:
        scope = scope_of(request)
        query = IsvcVerdictQuerySerializer(data=request.query_params)
        cluster = query.chosen_cluster(scope)
        verdicts = [verdict for verdict in isvc_verdicts(cluster, scope=scope) if query.keeps(verdict)]
        results = namespace_tokens([verdict.to_dict() for verdict in verdicts])
        return Response({**verdicts_envelope(cluster), "results": results})
