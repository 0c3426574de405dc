"""Who may read and write through the API. Kept apart from core.api because DRF
imports permission classes while loading its own views."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from django.conf import settings
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

if TYPE_CHECKING:
    from rest_framework.views import APIView


class HasPermissionOrReadOnly(BasePermission):
    """Reads: anyone while settings.API_ANONYMOUS_READ is on, else any logged-in user.

    Writes: a logged-in user holding every Django permission the view lists for the action in
    `write_permissions` (keyed by viewset action, or by lower-case HTTP method on a plain
    APIView), e.g. `write_permissions = {"create": ("inventory.add_cluster",)}`. A write the
    view does not list is refused, so a new POST is closed until someone names its permission.
    """

    message = "You do not have permission to change this."

    def has_permission(self, request: Request, view: APIView) -> bool:
        if request.method in SAFE_METHODS:
            return bool(settings.API_ANONYMOUS_READ or request.user.is_authenticated)
        required = self.required_permissions(request, view)
        if required is None or not request.user.is_authenticated:
            return False
        return bool(request.user.has_perms(required))

    @staticmethod
    def required_permissions(request: Request, view: APIView) -> Sequence[str] | None:
        table: Mapping[str, Sequence[str]] = getattr(view, "write_permissions", {})
        action = getattr(view, "action", None) or (request.method or "").lower()
        return table.get(action)


class CanRead(BasePermission):
    """The read rule for every method: for endpoints that only compute (a what-if POST)."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return bool(settings.API_ANONYMOUS_READ or request.user.is_authenticated)
