"""The root URL configuration: the operations endpoints (ome_dashboard.ops), then the
dashboard's whole URL tree (web.urls)."""

from __future__ import annotations

from django.urls import include, path

urlpatterns = [
    # /healthz, /readyz, /metrics (probes answered first by ops.middleware.ProbeMiddleware)
    path("", include("ome_dashboard.ops.urls")),
    path("", include("web.urls")),
]

# JSON error bodies under /api/ (when DEBUG is off), the dashboard's own pages elsewhere
# (templates/403.html, 404.html, 500.html, 403_csrf.html).
handler404 = "core.api.not_found"
handler500 = "core.api.failed"
