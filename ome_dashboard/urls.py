"""URL configuration: the UI at /, the JSON API under /api/v1/, its schema and docs, admin."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

import compat.api
import compat.api_analysis
import inventory.api
import patches.api

from . import views
from .api import router

# Apps plug their API in here: their router's viewsets, and their other views' url patterns.
router.registry.extend(inventory.api.router.registry)
router.registry.extend(compat.api.router.registry)
router.registry.extend(patches.api.router.registry)
router.APIRootView.extra_endpoints = {**compat.api.ROOT_ENDPOINTS, **compat.api_analysis.ROOT_ENDPOINTS}
api_urls = [*compat.api.urlpatterns, *compat.api_analysis.urlpatterns, *router.urls]

urlpatterns = [
    path("", views.home, name="home"),
    path(
        "", include("ome_dashboard.ops")
    ),  # /healthz, /readyz, /metrics (probes answered first by ops.ProbeMiddleware)
    path("admin/", admin.site.urls),
    path("api/v1/", include((api_urls, "api"), namespace="api")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
    # HTML pages (templates/ + htmx), and the login/logout pages they link to.
    path("", include("compat.urls")),
    path("", include("inventory.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
]

# JSON error bodies under /api/ (when DEBUG is off), Django's pages elsewhere.
handler404 = "ome_dashboard.api.not_found"
handler500 = "ome_dashboard.api.failed"
