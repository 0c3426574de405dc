"""The /api/v1/ root: its router and the root view listing every endpoint.

web.urls registers every resource on this router and lists the API's other views, which the
root lists too (`extra_endpoints`, derived from those url patterns). Error bodies and paging
are core.api's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import routers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse

API_VERSION = "v1"


class ApiRootView(routers.APIRootView):
    """The API root: the version, every registered list endpoint, and the schema and docs."""

    # Endpoints that are not router lists (key -> url name in the API's namespace); set by web.urls.
    extra_endpoints: Mapping[str, str] = {}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        endpoints = dict(super().get(request, *args, **kwargs).data)
        namespace = request.resolver_match.namespace if request.resolver_match else ""
        for key, url_name in self.extra_endpoints.items():
            endpoints[key] = reverse(f"{namespace}:{url_name}" if namespace else url_name, request=request)
        endpoints["schema"] = reverse("schema", request=request)
        endpoints["docs"] = reverse("swagger-ui", request=request)
        return Response({"version": API_VERSION, "endpoints": endpoints})


class ApiRouter(routers.DefaultRouter):
    APIRootView = ApiRootView
    include_format_suffixes = False


router = ApiRouter()
