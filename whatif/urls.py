"""The what-if page fragment of a runtime, and a model's near misses with their fixes."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "whatif"

urlpatterns = [
    path("runtimes/<int:pk>/what-if/", views.runtime_whatif, name="runtime-whatif"),
    path("models/<int:pk>/near-misses/", views.near_misses, name="near-misses"),
]
