"""The patches tests' urlconf: the project's (its error pages link the whole navigation)."""

from __future__ import annotations

from ome_dashboard.urls import urlpatterns

__all__ = ["urlpatterns"]
