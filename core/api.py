"""The API's shared pieces: error bodies, paging, and the 404/500 handlers.

Errors always come back as `{"detail": ..., "code": ..., "field": ...}`: a DRF error, or any
core.errors.DomainError an app raises, whatever its app.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found, server_error
from rest_framework import exceptions, serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import DomainError
from .web import namespace_token


class ApiError(exceptions.APIException):
    """An error with a machine-readable code and the request field it is about."""

    def __init__(self, detail: str, *, code: str, field: str | None = None, status: int = 400) -> None:
        super().__init__(detail, code)
        self.status_code = status
        self.field = field


class Pagination(PageNumberPagination):
    """`?page=N&page_size=M`: a page past the end is a 404 naming `page`; a page size that is not
    a whole number from 1 to the cap (1,000) is a 400 naming `page_size` and the cap."""

    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_page_size(self, request: Request) -> int | None:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None or raw == "":
            return self.page_size
        if not raw.isdecimal() or not 1 <= int(raw) <= self.max_page_size:
            raise ApiError(
                f"page_size: expected a whole number from 1 to {self.max_page_size} (the cap), got {raw!r}",
                code="invalid_page_size",
                field=self.page_size_query_param,
            )
        return int(raw)

    def paginate_queryset(self, queryset: Any, request: Request, view: APIView | None = None) -> list[Any] | None:
        try:
            return super().paginate_queryset(queryset, request, view)
        except exceptions.NotFound as error:
            raise ApiError(str(error.detail), code="invalid_page", field=self.page_query_param, status=404) from error


class NamespaceField(serializers.CharField):
    """A namespace in a response: `_cluster` for cluster scope, the token every query takes."""

    def to_representation(self, value: Any) -> str:
        return namespace_token(str(value))


# Fields whose values are Kubernetes objects or parts of one: they keep Kubernetes' own names
# and values (a manifest's metadata.namespace is never rewritten). `values` and `version` are an
# inventory change's field values and resourceVersion (the history's `cause`); `operations` are
# a fix's JSON patch operations, whose values are parts of the object they patch, and `created`
# the manifests of the objects a fix creates.
KUBERNETES_FIELDS = frozenset(
    {
        "obj", "object", "patch", "merge_patch", "before", "after", "current", "diffusion_pipeline", "values",
        "version", "operations", "created",
    }
)  # fmt: skip


def namespace_tokens(data: Any) -> Any:
    """An app's API data with cluster scope as `_cluster`, the token every query takes: each
    `namespace` that is "" and each "" in a `namespaces` list (not inside KUBERNETES_FIELDS)."""
    if isinstance(data, Mapping):
        return {key: _token_value(str(key), value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [namespace_tokens(value) for value in data]
    return data


def _token_value(key: str, value: Any) -> Any:
    if key in KUBERNETES_FIELDS:
        return value
    if key == "namespace" and isinstance(value, str):
        return namespace_token(value)
    if key == "namespaces" and isinstance(value, list | tuple):
        return [namespace_token(item) if isinstance(item, str) else item for item in value]
    return namespace_tokens(value)


def api_keys(data: Any) -> Any:
    """A JSON value with every object key in the API's casing (snake_case): for the dicts of
    `matching` (whose to_dict() mirrors OME's Go field names), never for Kubernetes objects."""
    if isinstance(data, Mapping):
        return {_snake(str(key)): api_keys(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [api_keys(value) for value in data]
    return data


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _first_error(detail: Any, path: tuple[str, ...] = ()) -> tuple[tuple[str, ...], Any] | None:
    """The field path and text of the first message in a (nested) DRF error detail."""
    if isinstance(detail, Mapping):
        for key, value in detail.items():
            found = _first_error(value, (*path, str(key)))
            if found is not None:
                return found
        return None
    if isinstance(detail, list):
        for index, value in enumerate(detail):
            # A list of messages belongs to its field; a list of objects is indexed.
            found = _first_error(value, (*path, str(index)) if isinstance(value, Mapping) else path)
            if found is not None:
                return found
        return None
    return path, detail


def _error_body(exc: exceptions.APIException) -> dict[str, Any]:
    if isinstance(exc, ApiError):
        return {"detail": str(exc.detail), "code": exc.get_codes(), "field": exc.field}
    if isinstance(exc.detail, list | dict):
        found = _first_error(exc.detail)
        path, message = found if found is not None else ((), "invalid input")
        fields = [part for part in path if part != "non_field_errors"]
        field = ".".join(fields) or None
        body = {
            "detail": f"{field}: {message}" if field else str(message),
            "code": getattr(message, "code", "invalid"),
            "field": field,
        }
        if isinstance(exc.detail, dict) and (len(exc.detail) > 1 or field is None):
            body["errors"] = exc.detail
        return body
    return {"detail": str(exc.detail), "code": getattr(exc.detail, "code", "error"), "field": None}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, with every body shaped `{"detail", "code", "field"}`; a multi-field
    validation error also carries all messages under `errors`. Anything else stays a 500."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(*exc.args)
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    elif isinstance(exc, DomainError):
        exc = ApiError(str(exc), code=exc.code, field=exc.field, status=exc.http_status)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.APIException):
        response.data = _error_body(exc)
    return response


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: JSON under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse(
            {"detail": f"no API endpoint at {request.path}", "code": "not_found", "field": None}, status=404
        )
    return page_not_found(request, exception)


def failed(request: HttpRequest) -> HttpResponse:
    """handler500: JSON under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": "server error", "code": "server_error", "field": None}, status=500)
    return server_error(request)
