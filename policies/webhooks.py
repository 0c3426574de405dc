"""Sending one webhook delivery: the body in the receiver's format, signed, POSTed with a short
timeout; on failure tried again later with exponential backoff, up to WEBHOOK_MAX_ATTEMPTS.

Signature (generic JSON and Slack alike): `X-OME-Compat-Timestamp: <unix seconds>` and
`X-OME-Compat-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>" with the key>`; a
receiver recomputes it and refuses a timestamp outside its replay window (`signature_valid`).
`X-OME-Compat-Delivery` carries the event id, the same on every attempt, for receivers that
deduplicate. The key is read from WEBHOOK_SECRET_DIR at send time and never logged or stored.
Only public addresses are reached, and no redirect is followed (policies.egress).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from .egress import opener
from .models import Delivery, Receiver

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-OME-Compat-Signature"
TIMESTAMP_HEADER = "X-OME-Compat-Timestamp"
DELIVERY_HEADER = "X-OME-Compat-Delivery"


def sign(key: bytes, timestamp: int, body: bytes) -> str:
    return "sha256=" + hmac.new(key, str(timestamp).encode() + b"." + body, hashlib.sha256).hexdigest()


def signature_valid(key: bytes, timestamp: str, body: bytes, signature: str, *, now: float, window: float) -> bool:
    """What a receiver checks: the signature matches and the timestamp is within `window`
    seconds of `now` (a replayed old delivery fails)."""
    if not timestamp.isdecimal() or abs(now - int(timestamp)) > window:
        return False
    return hmac.compare_digest(sign(key, int(timestamp), body), signature)


def url_shown(url: str) -> str:
    """A receiver URL as pages, logs and the API show it: scheme and host only (Slack's URLs
    carry their token in the path)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}/…"


def _key(receiver: Receiver) -> bytes:
    if not receiver.secret_file:
        return b""
    path = Path(settings.WEBHOOK_SECRET_DIR) / Path(receiver.secret_file).name
    return path.read_bytes().strip()


def _slack(text: object) -> str:
    """Text from clusters and policies, inert in Slack's markup (no links, no mentions)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_text(payload: dict[str, Any]) -> str:
    if payload["type"] == "pick.changed":
        before, after = payload["before"]["runtime"] or "no runtime", payload["after"]["runtime"] or "no runtime"
        scope = payload["namespace"] or "cluster scope"
        text = f"[{payload['cluster']}] OME's pick for {payload['model']} in {scope} changed: {before} -> {after}"
        return _slack(text)
    assertion = payload["assertion"]
    state = "FAILING" if payload["type"] == "assertion.failing" else "passing again"
    lines = [f"[{payload['cluster']}] policy {assertion['id']} ({assertion['severity']}) is {state}"]
    if assertion.get("owner"):
        lines.append(f"owner: {assertion['owner']}")
    lines += [f"• {failure['message']}" for failure in payload["failures"][:5]]
    return _slack("\n".join(lines))


def body_of(delivery: Delivery) -> bytes:
    payload = {"id": delivery.event_id, **delivery.payload}
    if delivery.receiver.format == Receiver.Format.SLACK:
        payload = {"text": slack_text(delivery.payload)}
    return json.dumps(payload, sort_keys=True).encode()


def _post(delivery: Delivery) -> int:
    """POST the delivery; its HTTP status (urllib raises for none)."""
    body = body_of(delivery)
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "ome-compat-webhooks",
        TIMESTAMP_HEADER: str(timestamp),
        DELIVERY_HEADER: delivery.event_id,
    }
    key = _key(delivery.receiver)
    if key:
        headers[SIGNATURE_HEADER] = sign(key, timestamp, body)
    request = urllib.request.Request(delivery.receiver.url, data=body, headers=headers, method="POST")
    with opener().open(request, timeout=settings.WEBHOOK_TIMEOUT) as response:
        return int(response.status)


def _claim(delivery_id: int) -> Delivery | None:
    """Take a due delivery (pending, or sending but abandoned by a worker that died)."""
    now = timezone.now()
    abandoned = now - timedelta(seconds=settings.WEBHOOK_TIMEOUT * 2 + 30)
    claimed = (
        Delivery.objects.filter(pk=delivery_id, next_attempt_at__lte=now)
        .filter(Q(status=Delivery.Status.PENDING) | Q(status=Delivery.Status.SENDING, next_attempt_at__lt=abandoned))
        .update(status=Delivery.Status.SENDING, next_attempt_at=now)
    )
    return Delivery.objects.select_related("receiver").get(pk=delivery_id) if claimed else None


def webhook_deliver(delivery_id: int) -> float | None:
    """Send one delivery if it is due. Returns the seconds until its next attempt after a
    failure, None when delivered, given up, or not due (another worker has it)."""
    delivery = _claim(delivery_id)
    if delivery is None:
        return None
    delivery.attempts += 1
    try:
        status, error = _post(delivery), ""
    except urllib.error.HTTPError as failure:
        status, error = failure.code, f"HTTP {failure.code}"
    except (urllib.error.URLError, OSError) as failure:
        status, error = 0, type(failure).__name__ + ": " + str(getattr(failure, "reason", "") or "no answer")[:200]
    delivery.last_status_code = status or None
    delivery.last_error = error
    delay = None
    if 200 <= status < 300:
        delivery.status, delivery.delivered_at = Delivery.Status.DELIVERED, timezone.now()
    elif delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS:
        delivery.status = Delivery.Status.FAILED
    else:
        delay = settings.WEBHOOK_RETRY_BASE * 2 ** (delivery.attempts - 1)
        delivery.status, delivery.next_attempt_at = Delivery.Status.PENDING, timezone.now() + timedelta(seconds=delay)
    delivery.save(
        update_fields=["attempts", "last_status_code", "last_error", "status", "delivered_at", "next_attempt_at"]
    )
    logger.info(
        "delivery %d to %s (%s): attempt %d, %s", delivery.pk, delivery.receiver.name,
        url_shown(delivery.receiver.url), delivery.attempts, delivery.status,
    )  # fmt: skip
    return delay


def deliveries_due() -> list[int]:
    """Deliveries whose next attempt is due (for the beat's safety net)."""
    return list(
        Delivery.objects.filter(
            status__in=[Delivery.Status.PENDING, Delivery.Status.SENDING], next_attempt_at__lte=timezone.now()
        ).values_list("pk", flat=True)[:500]
    )
