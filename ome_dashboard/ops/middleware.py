"""Middleware that runs before everything else: the probe paths, and the request size limit."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from .metrics import metrics
from .probes import healthz, readyz

PROBES: dict[str, Callable[[HttpRequest], HttpResponse]] = {"/healthz": healthz, "/readyz": readyz, "/metrics": metrics}


class ProbeMiddleware:
    """Answers the probe paths itself, before SecurityMiddleware's HTTPS redirect and before
    anything asks for the (validated) host: kubelet and Prometheus call the pod by its IP over
    plain HTTP, which ALLOWED_HOSTS and SECURE_SSL_REDIRECT would refuse. Every other request
    goes on unchanged."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        view = PROBES.get(request.path_info)
        if view is not None:
            return view(request)
        return self.get_response(request)


class RequestSizeLimitMiddleware:
    """Refuses a request whose body is larger than REQUEST_MAX_BYTES (413, saying so) before
    anything reads it: Django stores file uploads of any size on disk otherwise, and DRF reads
    JSON bodies whole. The largest legitimate body is a what-if's manifests (1 MiB by default)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = int(settings.REQUEST_MAX_BYTES)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > limit:
            detail = f"the request body is larger than {limit // 1024} KiB (REQUEST_MAX_BYTES)"
            if request.path_info.startswith("/api/"):
                return JsonResponse({"detail": detail, "code": "request_too_large", "field": None}, status=413)
            return HttpResponse(f"{detail}\n", status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
