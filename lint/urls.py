"""The lint page and its acknowledge action."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "lint"

urlpatterns = [
    path("lint/", views.lint, name="lint"),
    path("lint/acknowledge/", views.acknowledge, name="acknowledge"),
]
