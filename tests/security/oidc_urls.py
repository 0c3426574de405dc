"""The dashboard's URLs with the OIDC ones, as settings add them when OIDC_RP_CLIENT_ID is set."""

from __future__ import annotations

from django.urls import include, path

from ome_dashboard.urls import urlpatterns as dashboard

urlpatterns = [*dashboard, path("oidc/", include("mozilla_django_oidc.urls"))]
