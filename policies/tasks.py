"""Thin tasks: policy evaluation after a matrix update (on the `matrix` queue, after the
update it follows), one webhook delivery per task and the beat's retry of due deliveries (on
the short `control` queue: a delivery waits at most WEBHOOK_TIMEOUT)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from inventory.models import Cluster

from .evaluation import policies_evaluate
from .webhooks import deliveries_due, webhook_deliver


@shared_task(name="policies.policies_evaluate")
def policies_evaluate_task(cluster_id: int, causes: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    result = policies_evaluate(cluster, causes=causes or [])
    return {"evaluated": result.evaluated, "failing": result.failing, "changed": result.changed}


@shared_task(name="policies.webhook_deliver")
def webhook_deliver_task(delivery_id: int) -> str:
    delay = webhook_deliver(delivery_id)
    if delay is not None:
        webhook_deliver_task.apply_async((delivery_id,), countdown=delay)
        return f"retry in {delay:.1f} s"
    return "done"


@shared_task(name="policies.webhooks_retry_due")
def webhooks_retry_due_task() -> int:
    """Beat: queue the deliveries that are due (their task was lost with the broker or a worker)."""
    due = deliveries_due()
    for delivery_id in due:
        webhook_deliver_task.delay(delivery_id)
    return len(due)
