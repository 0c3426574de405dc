"""A small urlconf for the patches tests: the app's router as ome_dashboard.urls mounts it, plus
the admin."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from patches.api import router

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include((router.urls, "api"), namespace="api")),
]
