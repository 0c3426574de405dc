"""HTML pages of the one-click pipeline patch."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "patches"

urlpatterns = [
    path("models/<int:pk>/patch/", views.patch, name="patch"),
    path("models/<int:pk>/model-index/", views.model_index, name="model-index"),
    path("patches/<int:pk>/", views.patch_result, name="patch-result"),
]
