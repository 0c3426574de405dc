"""The fleet page."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "fleet"

urlpatterns = [path("fleet/", views.fleet, name="fleet")]
