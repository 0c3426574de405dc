"""Project-level pages: the home placeholder and the health check."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html")


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    # Liveness only: answers without touching the database or Redis, so a slow dependency
    # does not get the web process restarted.
    return JsonResponse({"status": "ok"})
