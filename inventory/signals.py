"""`inventory_changed` is sent after each committed change to a cluster's inventory.

Receivers get `cluster_id` and `changes`, a list of `Change`: which object, added, changed or
removed, and which fields changed. The matrix recomputes only what these touch.
"""

from __future__ import annotations

from django.dispatch import Signal

inventory_changed = Signal()
