"""Sent after a cluster's matrix changed (a build published, or an update that wrote rows),
with the cluster and the inventory changes that caused it (`causes`, empty for a build).

The one way to follow a matrix update: each follower connects its own receiver in its app's
ready() (isvcs records verdicts, lint queues proofs, policies queue an evaluation). Receivers
run in the worker that made the change, right after it, in app order; slow work goes to a task
queued on commit.
"""

from __future__ import annotations

from django.dispatch import Signal

matrix_updated = Signal()
