"""Sent after a cluster's matrix changed (a build published, or an update that wrote rows),
with the inventory changes that caused it (empty for a build). Receivers run in the worker
that made the change, after it; they must not do slow work inline (queue a task instead)."""

from __future__ import annotations

from django.dispatch import Signal

matrix_updated = Signal()
