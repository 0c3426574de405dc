"""InferenceService verdicts as the cluster stores them: today's verdict of every service
(`matching.evaluate_isvc`), the verdict recorded when it was first seen, and whether OME would
decide differently today than when it decided.

OME does not re-check a service when a model changes (Q30, U6). The first verdict seen is
stored (InferenceServiceVerdict) and compared with today's; the service's status conditions
(RuntimeReady, Ready) take precedence where the object has them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

import matching
from access.scope import SYSTEM, Scope
from inventory.models import Cluster, Kind, Resource
from inventory.parsed import Inventory, load_inventory
from matching import ADVISORY, BLOCKED, NAMED, WAITING, InferenceService, IsvcOutcome, ObjectKey, key_dict, reasons

from .models import InferenceServiceVerdict
from .reapply import models_changed, reapply_for

__all__ = [
    "FirstVerdict",
    "IsvcVerdict",
    "Observed",
    "evaluate_isvcs",
    "isvc_at_risk",
    "isvc_verdicts",
    "isvc_verdicts_refresh",
]

# Drift: how OME would decide differently today.
WOULD_NOW_SUCCEED = "would-now-succeed"
NO_LONGER_MATCHES = "no-longer-matches"
WOULD_PICK_DIFFERENTLY = "would-pick-differently"


def _key_list(key: ObjectKey | None) -> list[str] | None:
    return None if key is None else list(key)


def _key_from(value: Any) -> ObjectKey | None:
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return (str(value[0]), str(value[1]), str(value[2]))
    return None


@dataclass(frozen=True)
class Observed:
    """What the object's status says OME did (conditions; None when absent)."""

    ready: str | None = None
    runtime_ready: str | None = None
    reason: str | None = None
    message: str | None = None

    @property
    def present(self) -> bool:
        return self.ready is not None or self.runtime_ready is not None

    @property
    def rejected(self) -> bool:
        return self.runtime_ready == "False"

    @property
    def running(self) -> bool:
        return self.ready == "True"

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def observed_from(obj: Mapping[str, Any] | None) -> Observed:
    status = obj.get("status") if isinstance(obj, Mapping) else None
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    found: dict[str, Mapping[str, Any]] = {}
    for condition in conditions if isinstance(conditions, list) else ():
        if isinstance(condition, Mapping) and isinstance(condition.get("type"), str):
            found[condition["type"]] = condition
    ready, runtime_ready = found.get("Ready"), found.get("RuntimeReady")

    def text(condition: Mapping[str, Any] | None, name: str) -> str | None:
        value = condition.get(name) if condition is not None else None
        return value if isinstance(value, str) else None

    source = runtime_ready or ready
    return Observed(
        ready=text(ready, "status"),
        runtime_ready=text(runtime_ready, "status"),
        reason=text(source, "reason"),
        message=text(source, "message"),
    )


@dataclass(frozen=True)
class FirstVerdict:
    """The verdict recorded when the service was first seen (or last changed)."""

    verdict: str
    runtime: ObjectKey | None
    failure: str
    error: str
    at: str

    def to_dict(self) -> dict[str, object]:
        return {
            "verdict": self.verdict,
            "runtime": key_dict(self.runtime),
            "failure": self.failure or None,
            "error": self.error or None,
            "at": self.at,
        }


@dataclass(frozen=True, kw_only=True)
class IsvcVerdict(IsvcOutcome):
    """One InferenceService: what OME does with it now (`IsvcOutcome`), and how that differs
    from before. `drift`: would-now-succeed | no-longer-matches | would-pick-differently, judged
    from `observed` when the status has conditions, else from `first`; its hint replaces `fix`.
    `ignored`: why OME silently ignores it (`matching.ome_ignores`); `reapply`: see isvcs.reapply.
    """

    namespace: str
    name: str
    uid: str
    observed: Observed
    spec_hash: str
    first: FirstVerdict | None = None
    drift: str | None = None
    drift_basis: str | None = None
    ignored: matching.Ignored | None = None
    reapply: str | None = None

    @property
    def key(self) -> ObjectKey:
        return (Kind.INFERENCE_SERVICE.value, self.namespace, self.name)

    def to_dict(self) -> dict[str, object]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "uid": self.uid,
            "model": key_dict(self.model),
            "behaviour": self.behaviour,
            "webhook_model": key_dict(self.webhook_model),
            "runtime": key_dict(self.runtime),
            "runtime_named": self.runtime_named,
            "score": self.score,
            "verdict": self.verdict,
            "label": self.label,
            "failure": self.failure,
            "error": self.error,
            "event": None if self.event is None else {"reason": self.event[0], "message": self.event[1]},
            "observed": self.observed.to_dict() if self.observed.present else None,
            "first": None if self.first is None else self.first.to_dict(),
            "drift": self.drift,
            "drift_basis": self.drift_basis,
            "fix": self.fix,
            "notes": list(self.notes),
            "ignored": None if self.ignored is None else self.ignored.to_dict(),
            "reapply": self.reapply,
        }


# --------------------------------------------------------------------------------------------
# Drift

Drift = tuple[str | None, str | None, str | None]
"""(drift, basis, fix)"""
_NO_DRIFT: Drift = (None, None, None)


def _drift(
    inventory: Inventory, service: InferenceService, now: IsvcOutcome, observed: Observed, first: FirstVerdict | None
) -> Drift:
    """How OME would decide differently today (never while it waits on a model: it checks again itself).
    A RuntimeReady=False or Ready=True condition says what OME did; else the first recorded verdict does."""
    if now.verdict == WAITING:
        return _NO_DRIFT
    if observed.rejected:
        return (WOULD_NOW_SUCCEED, "status", reasons.REAPPLY) if now.ok else _NO_DRIFT
    if observed.running:
        ran_with = first.runtime if first is not None else (now.runtime if now.runtime_named else None)
        return _changed_since(inventory, service, now, ran_with, first, "status")
    if first is None or first.verdict == WAITING:  # never deployed; OME decides again by itself
        return _NO_DRIFT
    if first.verdict == BLOCKED:
        return (WOULD_NOW_SUCCEED, "first-seen", reasons.REAPPLY) if now.ok else _NO_DRIFT
    return _changed_since(inventory, service, now, first.runtime, first, "first-seen")


def _changed_since(
    inventory: Inventory,
    service: InferenceService,
    now: IsvcOutcome,
    ran_with: ObjectKey | None,
    first: FirstVerdict | None,
    basis: str,
) -> Drift:
    """For a service that was deployed (running, or accepted when first seen)."""
    if now.verdict == BLOCKED:
        return NO_LONGER_MATCHES, basis, now.fix
    if now.verdict == ADVISORY and (first is None or first.verdict == NAMED):
        return NO_LONGER_MATCHES, basis, now.fix
    if now.runtime_named or ran_with is None or ran_with == now.runtime:
        return _NO_DRIFT
    fix = reasons.reapply_to_move(now.runtime[2] if now.runtime else "another runtime")
    if matching.isvc_still_matches(inventory.grid, service, now.model, ran_with):
        return WOULD_PICK_DIFFERENTLY, basis, fix
    return NO_LONGER_MATCHES, basis, fix


# --------------------------------------------------------------------------------------------
# All services


def spec_hash(obj: Mapping[str, Any] | None) -> str:
    """What makes OME decide again: the spec, labels and annotations."""
    if not isinstance(obj, Mapping):
        return ""
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        metadata = {}
    relevant = {"spec": obj.get("spec"), "labels": metadata.get("labels"), "annotations": metadata.get("annotations")}
    return hashlib.sha256(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()


def _pinned(obj: Mapping[str, Any] | None) -> bool:
    """`spec.runtime.autoSync: false` (newer OME): the runtime comes from a stored revision."""
    spec = obj.get("spec") if isinstance(obj, Mapping) else None
    runtime = spec.get("runtime") if isinstance(spec, Mapping) else None
    return isinstance(runtime, Mapping) and runtime.get("autoSync") is False


def _uid(obj: Mapping[str, Any] | None) -> str:
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    uid = metadata.get("uid") if isinstance(metadata, Mapping) else None
    return str(uid or "")


def evaluate_isvcs(
    inventory: Inventory,
    objects: Mapping[ObjectKey, Mapping[str, Any]] | None = None,
    first_seen: Mapping[tuple[str, str, str], FirstVerdict] | None = None,
    models_changed: Mapping[ObjectKey, datetime] | None = None,
) -> list[IsvcVerdict]:
    """Verdicts for every InferenceService of an Inventory. `objects`: the raw objects (for the
    uid and status conditions); `first_seen`: recorded first verdicts by (namespace, name, uid);
    `models_changed`: when each model last changed."""
    objects, first_seen, models_changed = objects or {}, first_seen or {}, models_changed or {}
    keys = sorted(set(inventory.isvcs) | {key for key in inventory.invalid if key[0] == Kind.INFERENCE_SERVICE})
    verdicts = []
    for key in keys:
        obj = objects.get(key)
        uid = _uid(obj)
        observed, first = observed_from(obj), first_seen.get((key[1], key[2], uid))
        service = inventory.isvcs.get(key)
        if service is None:
            now, drift = matching.invalid_isvc(inventory.invalid[key], behaviour=inventory.behaviour), _NO_DRIFT
        else:
            now = matching.evaluate_isvc(inventory.grid, service, inventory.invalid, pinned=_pinned(obj))
            drift = _drift(inventory, service, now, observed, first)
        verdicts.append(
            IsvcVerdict(
                **_outcome_fields(now),
                namespace=key[1],
                name=key[2],
                uid=uid,
                observed=observed,
                spec_hash=spec_hash(obj),
                first=first,
                drift=drift[0],
                drift_basis=drift[1],
                fix=drift[2] if drift[0] is not None and drift[2] else now.fix,
                ignored=matching.ome_ignores(now, service, inventory.grid, inventory.invalid),
                reapply=reapply_for(key, now, first, models_changed),
            )
        )
    return verdicts


def _outcome_fields(outcome: IsvcOutcome) -> dict[str, Any]:
    """The outcome's fields but `fix`, which drift may replace."""
    return {item.name: getattr(outcome, item.name) for item in dataclasses.fields(outcome) if item.name != "fix"}


def _objects(cluster: Cluster) -> dict[ObjectKey, Mapping[str, Any]]:
    rows = Resource.objects.filter(cluster=cluster, kind=Kind.INFERENCE_SERVICE).values_list("namespace", "name", "obj")
    return {(Kind.INFERENCE_SERVICE.value, namespace, name): obj for namespace, name, obj in rows}


def _first_seen(records: Iterable[InferenceServiceVerdict]) -> dict[tuple[str, str, str], FirstVerdict]:
    return {
        (record.namespace, record.name, record.uid): FirstVerdict(
            verdict=record.first_verdict,
            runtime=_key_from(record.first_runtime),
            failure=record.first_failure,
            error=record.first_error,
            at=record.first_seen_at.isoformat(),
        )
        for record in records
    }


def isvc_verdicts(cluster: Cluster, *, scope: Scope) -> list[IsvcVerdict]:
    """Every InferenceService of the cluster the scope reads, with today's verdict and
    its drift from the recorded first verdict (read-only; see `isvc_verdicts_refresh`)."""
    records = InferenceServiceVerdict.objects.filter(cluster=cluster)
    first_seen, changed = _first_seen(records), models_changed(cluster, scope)
    verdicts = evaluate_isvcs(load_inventory(cluster), _objects(cluster), first_seen, changed)
    return [verdict for verdict in verdicts if scope.reads(cluster.name, verdict.namespace)]


_UPDATED_FIELDS = [
    "spec_hash",
    "first_seen_at",
    "current_at",
    "current_ignored",
    *(f"{when}_{name}" for when in ("first", "current") for name in ("verdict", "failure", "runtime", "error")),
]


def _verdict_values(verdict: IsvcVerdict, when: str) -> dict[str, Any]:
    """A record's first_* or current_* fields for the verdict."""
    return {
        f"{when}_verdict": verdict.verdict,
        f"{when}_failure": verdict.failure or "",
        f"{when}_runtime": _key_list(verdict.runtime),
        f"{when}_error": verdict.error or "",
    }


def isvc_verdicts_refresh(cluster: Cluster) -> list[IsvcVerdict]:
    """Record today's verdicts: a service seen for the first time (or changed since, or
    re-created with a new uid) gets its first verdict; every record gets the current one;
    records of services that are gone are deleted. Call it after matrix updates."""
    inventory = load_inventory(cluster)
    objects = _objects(cluster)
    now = timezone.now()
    with transaction.atomic():
        records = {
            (r.namespace, r.name, r.uid): r
            for r in InferenceServiceVerdict.objects.select_for_update().filter(cluster=cluster)
        }
        current = evaluate_isvcs(inventory, objects)
        seen = set()
        created, updated = [], []
        for verdict in current:
            identity = (verdict.namespace, verdict.name, verdict.uid)
            seen.add(identity)
            first_values = _verdict_values(verdict, "first")
            values = _verdict_values(verdict, "current") | {
                "current_ignored": verdict.ignored.reason if verdict.ignored else ""
            }
            record = records.get(identity)
            if record is None:
                created.append(
                    InferenceServiceVerdict(
                        cluster=cluster,
                        namespace=verdict.namespace,
                        name=verdict.name,
                        uid=verdict.uid,
                        spec_hash=verdict.spec_hash,
                        first_seen_at=now,
                        current_at=now,
                        **first_values,
                        **values,
                    )
                )
                continue
            if record.spec_hash != verdict.spec_hash:
                record.spec_hash = verdict.spec_hash
                record.first_seen_at = now
                for name, value in first_values.items():
                    setattr(record, name, value)
            for name, value in values.items():
                setattr(record, name, value)
            record.current_at = now
            updated.append(record)
        InferenceServiceVerdict.objects.bulk_create(created, batch_size=500)
        InferenceServiceVerdict.objects.bulk_update(updated, _UPDATED_FIELDS, batch_size=500)
        gone = [record.pk for identity, record in records.items() if identity not in seen]
        InferenceServiceVerdict.objects.filter(pk__in=gone).delete()
    return isvc_verdicts(cluster, scope=SYSTEM)


def isvc_at_risk(verdict: IsvcVerdict) -> bool:
    """A service OME would not deploy, would use a runtime that does not declare support for its
    model (advisory), silently ignores, or would decide differently today than when it decided."""
    return verdict.verdict in (BLOCKED, ADVISORY) or verdict.drift is not None or verdict.ignored is not None
