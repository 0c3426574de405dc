"""Included by ome_dashboard.urls, so that the probes also resolve (and reverse) like any page;
ProbeMiddleware answers them before the URL resolver is reached."""

from __future__ import annotations

from django.urls import path

from .metrics import metrics
from .probes import healthz, readyz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", metrics, name="metrics"),
]
