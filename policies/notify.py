"""Webhook events: an assertion that starts or stops failing, a pick that changes. Each event
goes to the enabled receivers whose cluster and namespaces cover it, as one `Delivery` per
receiver, deduplicated by the event's id, and is sent by its own task (policies.webhooks).
A receiver is sent only what its namespaces cover (`payload_for`, policies.visibility): the
failures and causes of those namespaces, a count over others withheld and counted as such."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from fnmatch import fnmatchcase
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

import matching
import matching.policy
from inventory.models import Cluster

from .models import AssertionState, Delivery, Receiver
from .visibility import failures_shown, readable_by_receiver

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Event:
    """`kind`: assertion | pick. `namespaces`: where it happens ("" cluster scope), for the
    receivers' namespace globs. `payload`: the generic JSON body, with every failure (each
    receiver is sent its part, payload_for). An assertion's kind and namespace globs say which
    receivers may be sent a failure counted over namespaces."""

    kind: str
    cluster: str
    namespaces: tuple[str, ...]
    payload: Mapping[str, Any]
    assertion_kind: str = ""
    assertion_namespaces: tuple[str, ...] = ()
    id: str = field(init=False)

    def __post_init__(self) -> None:
        digest = hashlib.sha256(json.dumps([self.kind, self.cluster, self.payload], sort_keys=True).encode())
        object.__setattr__(self, "id", digest.hexdigest()[:40])


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def failure_records(outcome: matching.policy.Outcome) -> list[dict[str, Any]]:
    """The outcome's failures as stored and put in events: with the `keys` of their objects,
    which say who may read them (policies.visibility) and are never sent."""
    return [{**failure.to_dict(), "keys": [list(key) for key in failure.objects]} for failure in outcome.failures]


def assertion_event(cluster: Cluster, state: AssertionState, outcome: matching.policy.Outcome) -> Event:
    assertion = outcome.assertion
    namespaces = sorted({failure.namespace for failure in outcome.failures}) or [""]
    payload = {
        "type": "assertion.failing" if not outcome.passed else "assertion.passing",
        "cluster": cluster.name,
        "assertion": assertion.to_dict(),
        "since": _stamp(state.since),
        "inventoryVersion": state.inventory_version,
        "causes": [_cause(item) for item in state.causes],
        "failures": failure_records(outcome),
    }
    covered = tuple(assertion.subjects.namespaces)
    return Event("assertion", cluster.name, tuple(namespaces), payload, assertion.kind, covered)


def _cause(item: Mapping[str, Any]) -> dict[str, Any]:
    return {key: item.get(key) for key in ("kind", "namespace", "name", "action", "fields")}


def pick_events(
    cluster: Cluster, changes: Mapping[str, Mapping[str, Any]], version: int, causes: Sequence[Any]
) -> list[Event]:
    found = []
    for _row, change in sorted(changes.items()):
        before, after = change["before"], change["after"]
        payload = {
            "type": "pick.changed",
            "cluster": cluster.name,
            "model": _text(after["model"]),
            "namespace": after["namespace"],
            "before": {"runtime": _text(before["pick"]), "score": before["score"]},
            "after": {"runtime": _text(after["pick"]), "score": after["score"]},
            "inventoryVersion": version,
            "causes": [_cause(item) for item in causes],
        }
        found.append(Event("pick", cluster.name, (after["namespace"],), payload))
    return found


def _text(key: Sequence[str] | None) -> str | None:
    return None if key is None else matching.key_text((key[0], key[1], key[2]))


def receiver_covers(receiver: Receiver, event: Event) -> bool:
    if not (receiver.on_assertion_change if event.kind == "assertion" else receiver.on_pick_change):
        return False
    if receiver.cluster is not None and receiver.cluster.name != event.cluster:
        return False
    globs = [glob.strip() for glob in receiver.namespaces.split(",") if glob.strip()]
    return not globs or any(fnmatchcase(ns, glob) for ns in event.namespaces if ns for glob in globs)


def payload_for(receiver: Receiver, event: Event) -> dict[str, Any]:
    """The event as `receiver` is sent it: the causes and (up to 20) failures of the namespaces
    its globs cover (their objects too, `keys`, which are not sent); `failuresWithheld` counts
    the failures counted over other namespaces."""
    readable = readable_by_receiver(receiver.namespaces)
    payload = dict(event.payload)
    causes = payload.get("causes", [])
    payload["causes"] = [item for item in causes if readable.reads(str(item.get("namespace") or ""))]
    if event.kind != "assertion":
        return payload
    shown, withheld = failures_shown(readable, event.assertion_kind, event.assertion_namespaces, payload["failures"])
    failures = [{key: value for key, value in item.items() if key != "keys"} for item in shown[:20]]
    payload |= {"failures": failures, "failuresTotal": len(shown)}
    return payload | ({"failuresWithheld": withheld} if withheld else {})


def deliveries_create(events: Iterable[Event]) -> list[int]:
    """One Delivery per (event, receiver that covers it); an event already recorded for a
    receiver is not recorded again. Returns the new deliveries' ids."""
    receivers = list(Receiver.objects.filter(enabled=True).select_related("cluster"))
    created = []
    for event in events:
        for receiver in receivers:
            if not receiver_covers(receiver, event):
                continue
            try:
                with transaction.atomic():
                    delivery = Delivery.objects.create(
                        receiver=receiver, event_id=event.id, event=str(event.payload["type"]),
                        cluster_name=event.cluster, payload=payload_for(receiver, event), next_attempt_at=timezone.now(),
                    )  # fmt: skip
            except IntegrityError:
                continue
            created.append(delivery.pk)
    return created


def events_deliver(events: Sequence[Event]) -> None:
    """Record the deliveries and queue one send task each. Runs after the evaluation commits;
    the broker being away leaves them pending for the beat's retry of due deliveries."""
    if not events:
        return
    from core.broker import BROKER_ERRORS

    from .tasks import webhook_deliver_task

    for delivery_id in deliveries_create(events):
        try:
            webhook_deliver_task.delay(delivery_id)
        except BROKER_ERRORS as error:
            logger.warning("delivery %d not queued (%s); the retry of due deliveries sends it", delivery_id, error)
