"""URL configuration: the UI at /, the JSON API under /api/v1/, its schema and docs, admin."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

import access.api
import fleet.api
import inventory.api
import isvcs.api
import lint.api
import matrix.api
import patches.api
import policies.api
import whatif.admission_api
import whatif.api
import whatif.check_api

from . import history, views
from .api import router

# Apps plug their API in here: their router's viewsets, and their other views' url patterns.
router.registry.extend(inventory.api.router.registry)
router.registry.extend(access.api.router.registry)
router.registry.extend(matrix.api.router.registry)
router.registry.extend(patches.api.router.registry)
_VIEW_APIS = (
    matrix.api,
    whatif.api,
    lint.api,
    isvcs.api,
    whatif.check_api,
    whatif.admission_api,
    fleet.api,
    policies.api,
)
router.APIRootView.extra_endpoints = {key: name for api in _VIEW_APIS for key, name in api.ROOT_ENDPOINTS.items()}
api_urls = [*(pattern for api in _VIEW_APIS for pattern in api.urlpatterns), *router.urls]

urlpatterns = [
    path("", views.home, name="home"),
    path("sync/", views.sync, name="sync"),
    path("search/", views.search, name="search"),
    path("history/", history.history, name="history"),
    # /healthz, /readyz, /metrics (probes answered first by ops.middleware.ProbeMiddleware)
    path("", include("ome_dashboard.ops.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", include((api_urls, "api"), namespace="api")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its start-up script as a file: the Content-Security-Policy allows no inline script.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    # HTML pages (templates/ + htmx), and the login/logout pages they link to.
    path("", include("matrix.urls")),
    path("", include("patches.urls")),
    path("", include("whatif.urls")),
    path("", include("lint.urls")),
    path("", include("fleet.urls")),
    path("", include("policies.urls")),
    path("", include("inventory.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
]
if settings.OIDC_ENABLED:
    urlpatterns.append(path("oidc/", include("mozilla_django_oidc.urls")))

# JSON error bodies under /api/ (when DEBUG is off), the dashboard's own pages elsewhere
# (templates/403.html, 404.html, 500.html, 403_csrf.html).
handler404 = "core.api.not_found"
handler500 = "core.api.failed"
