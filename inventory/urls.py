"""HTML pages of the inventory (the JSON API is inventory.api)."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "inventory"

urlpatterns = [
    path("sync/", views.sync, name="sync"),
    path("sync/<slug:name>/resync/", views.resync, name="resync"),
]
