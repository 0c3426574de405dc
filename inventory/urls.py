"""HTML actions of the inventory (the JSON API is inventory.api; the sync page is the site's)."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "inventory"

urlpatterns = [
    path("sync/<slug:name>/resync/", views.resync, name="resync"),
    path("clusters/add/", views.cluster_add, name="cluster-add"),
    path("sync/<slug:name>/ome-version/", views.ome_version, name="ome-version"),
]
