"""The warn-only validating webhook's endpoint: POST an AdmissionReview v1 about a change of a
runtime or model of the cluster named in the path; the answer always allows it, with warnings
(whatif.admission, docs/admission.md). It is not in the OpenAPI document: it speaks
Kubernetes' AdmissionReview v1, not the API's casing. The API server authenticates with an API token, as
`Authorization: Bearer <key>` (its kubeconfig's `token`) or `Token <key>`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from access.current import scope_of
from access.tokens import ApiTokenAuthentication, BearerApiTokenAuthentication
from core.permissions import CanRead
from whatif.admission import admission_review


class AdmissionView(APIView):
    """The AdmissionReview answer for a ServingRuntime, ClusterServingRuntime, BaseModel or
    ClusterBaseModel change: `allowed: true`, and warnings from the what-if and OME's runtime
    webhook. A body that is no AdmissionReview gets a 400 (the API server then ignores the
    webhook: `failurePolicy: Ignore`)."""

    authentication_classes = [BearerApiTokenAuthentication, ApiTokenAuthentication]
    permission_classes = [CanRead]

    # Kubernetes' AdmissionReview protocol (camelCase, its own envelope), not the project's API:
    # left out of the OpenAPI document, whose operations all speak the API's casing.
    @extend_schema(exclude=True)
    def post(self, request: Request, cluster: str) -> Response:
        return Response(admission_review(cluster, request.data, scope=scope_of(request)))
