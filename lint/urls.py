"""The lint page."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "lint"

urlpatterns = [path("lint/", views.lint, name="lint")]
