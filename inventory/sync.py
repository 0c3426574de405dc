"""Services that make the stored inventory equal what a cluster or a folder holds."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest, Now

from core.redact import redact

from . import records
from .live.state import object_rv, rv_order
from .locks import cluster_write_lock
from .models import Cluster, Kind, Resource, SyncState
from .signals import inventory_changed

logger = logging.getLogger(__name__)

ObjectKey = tuple[str, str, str]


@dataclass(frozen=True)
class Change:
    kind: str
    namespace: str
    name: str
    action: str  # "added", "changed" or "removed"
    fields: tuple[str, ...] = ()
    # What the matrix history shows: old and new values of the changed fields, and the object's
    # version after the change (resourceVersion, and the content hash a snapshot's patch names).
    values: dict[str, Any] = field(default_factory=dict, compare=False)
    version: dict[str, str] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "action": self.action,
            "fields": list(self.fields),
        }
        if self.values or self.version:
            found.update(values=self.values, version=self.version)
        return found


@dataclass
class KindCounts:
    added: int = 0
    changed: int = 0
    removed: int = 0
    unchanged: int = 0

    def line(self, kind: str) -> str:
        return f"{kind}: {self.added} added, {self.changed} changed, {self.removed} removed, {self.unchanged} unchanged"


@dataclass
class ApplyResult:
    counts: dict[str, KindCounts] = field(default_factory=lambda: {kind: KindCounts() for kind in Kind.values})
    changes: list[Change] = field(default_factory=list)

    def count(self, kind: str, action: str, change: Change | None = None) -> None:
        counts = self.counts[kind]
        setattr(counts, action, getattr(counts, action) + 1)
        if change is not None:
            self.changes.append(change)

    def add(self, other: ApplyResult) -> None:
        """Count `other`'s changes too (those of a committed transaction, once)."""
        for kind, counts in other.counts.items():
            mine = self.counts[kind]
            for action in ("added", "changed", "removed", "unchanged"):
                setattr(mine, action, getattr(mine, action) + getattr(counts, action))
        self.changes.extend(other.changes)


def _next_version(cluster: Cluster) -> int:
    """Bump the cluster's inventory version inside the caller's transaction (the row lock
    orders concurrent writers) and return the new value, in one statement (once per event)."""
    table, column = connection.ops.quote_name(Cluster._meta.db_table), connection.ops.quote_name("inventory_version")
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {column} = {column} + 1 WHERE id = %s RETURNING {column}", [cluster.pk])
        return int(cursor.fetchone()[0])


def _announce(cluster: Cluster, changes: list[Change]) -> None:
    """Tell the receivers after commit, each on its own: the changes are committed whatever a
    receiver does, and one receiver's failure must not keep the others from hearing them (the
    matrix's catch-up finds what a lost announcement left stale)."""
    if changes:
        transaction.on_commit(lambda: _send(cluster, changes))


def _send(cluster: Cluster, changes: list[Change]) -> None:
    for receiver, outcome in inventory_changed.send_robust(sender=Cluster, cluster_id=cluster.pk, changes=changes):
        if isinstance(outcome, Exception):
            logger.error("cluster %s: %s failed on %d changes", cluster, receiver, len(changes), exc_info=outcome)


def _stored_columns(obj: dict[str, Any]) -> dict[str, Any]:
    """Every column of a Resource that comes from the object, in a form both databases store.
    The content hash is of the object as sent, so an unchanged object stays unchanged."""
    stored, problem = records.storable(obj)
    values = records.columns(stored)
    values["store_error"] = "; ".join(p for p in (problem, values["store_error"]) if p)
    return {"obj": stored, "content_hash": records.content_hash(obj), **values}


def _new_resource(cluster: Cluster, key: ObjectKey, obj: dict[str, Any], path: str) -> Resource:
    """A new object to insert; its times are the database's clock, as freshness reads them."""
    kind, namespace, name = key
    return Resource(
        cluster=cluster,
        kind=kind,
        namespace=namespace,
        name=name,
        source_path=path,
        first_seen=Now(),
        last_seen=Now(),
        changed_at=Now(),
        **_stored_columns(obj),
    )


def _version(resource: Resource) -> dict[str, str]:
    return {"resourceVersion": resource.resource_version, "content": resource.content_hash[:16]}


def _changed(resource: Resource, obj: dict[str, Any], path: str) -> Change:
    """Update a stored object to `obj`; the change, with its fields' old and new values."""
    key, old = resource.key, resource.obj
    fields = _update_resource(resource, obj, path)
    values = records.changed_values(old, obj, list(fields))
    return Change(*key, "changed", fields, values=values, version=_version(resource))


def _update_resource(resource: Resource, obj: dict[str, Any], path: str) -> tuple[str, ...]:
    fields = tuple(records.changed_fields(resource.obj, obj))
    resource.source_path = path
    resource.last_seen = resource.changed_at = Now()  # the database's clock, written by the UPDATE
    for column, value in _stored_columns(obj).items():
        setattr(resource, column, value)
    return fields


UPDATED_COLUMNS = [
    "obj",
    "content_hash",
    "source_path",
    "last_seen",
    "changed_at",
    "uid",
    "resource_version",
    "generation",
    "error",
    "store_error",
    "model_format",
    "model_architecture",
    "pipeline_class",
    "has_pipeline",
    "storage_scheme",
    "disabled",
]


def snapshot_apply(
    cluster: Cluster,
    kind: str,
    objects: Mapping[ObjectKey, dict[str, Any]],
    *,
    prune: bool,
    paths: Mapping[ObjectKey, str] | None = None,
    result: ApplyResult | None = None,
) -> ApplyResult:
    """Make the stored objects of one kind equal `objects`; with `prune`, remove the others.

    Unchanged objects only get `last_seen` bumped. Announces the changes after commit.
    """
    result = result or ApplyResult()
    paths = paths or {}
    with transaction.atomic():
        stored = {r.key: r for r in Resource.objects.filter(cluster=cluster, kind=kind)}
        created, updated, unchanged = [], [], []
        for key, raw in objects.items():
            obj = records.stored(raw)  # no last-applied-configuration, credentials redacted
            resource = stored.get(key)
            if resource is None:
                created.append(_new_resource(cluster, key, obj, paths.get(key, "")))
                result.count(kind, "added", Change(*key, "added"))
            elif resource.content_hash != records.content_hash(obj):
                change = _changed(resource, obj, paths.get(key, ""))
                updated.append(resource)
                result.count(kind, "changed", change)
            else:
                unchanged.append(resource.pk)
                result.count(kind, "unchanged")
        gone = [resource for key, resource in stored.items() if key not in objects] if prune else []
        if created or updated or gone:
            version = _next_version(cluster)
            for resource in created + updated:
                resource.version = version
        Resource.objects.bulk_create(created, batch_size=500)
        Resource.objects.bulk_update(updated, [*UPDATED_COLUMNS, "version"], batch_size=500)
        Resource.objects.filter(pk__in=unchanged).update(last_seen=Now())
        Resource.objects.filter(pk__in=[r.pk for r in gone]).delete()
        for resource in gone:
            result.count(kind, "removed", Change(*resource.key, "removed"))
        _announce(cluster, [c for c in result.changes if c.kind == kind])
    return result


def _recount(cluster: Cluster, deltas: Mapping[str, tuple[int, int]]) -> None:
    """Keep the kinds' SyncState counts in step with a batch of events: `deltas` maps a kind to
    the change of its (count, invalid). A list counts afresh."""
    for kind, (count, invalid) in deltas.items():
        if count or invalid:
            SyncState.objects.filter(cluster=cluster, kind=kind).update(
                count=Greatest(F("count") + count, Value(0)), invalid=Greatest(F("invalid") + invalid, Value(0))
            )


Event = tuple[str, dict[str, Any]]  # (type, object) as a watch sent it


@dataclass
class _EventBatch:
    """The writes a batch of events makes, gathered in order and made at its end: an object
    the batch adds and then changes is inserted once, one it adds and removes never is."""

    cluster: Cluster
    held: dict[ObjectKey, Resource]  # the batch's objects as they stand after each event
    created: dict[ObjectKey, Resource] = field(default_factory=dict)
    updated: dict[int, Resource] = field(default_factory=dict)
    removed: list[int] = field(default_factory=list)
    touched: list[int] = field(default_factory=list)
    deltas: dict[str, tuple[int, int]] = field(default_factory=dict)

    def count(self, kind: str, count: int, invalid: int) -> None:
        old_count, old_invalid = self.deltas.get(kind, (0, 0))
        self.deltas[kind] = (old_count + count, old_invalid + invalid)

    def store(self, event_type: str, key: ObjectKey, obj: dict[str, Any]) -> Change | None:
        resource = self.held.get(key)
        if event_type == "DELETED":
            return None if resource is None else self._remove(key, resource)
        if resource is None:
            return self._add(key, obj)
        if resource.content_hash == records.content_hash(obj):
            if resource.pk is not None:
                self.touched.append(resource.pk)
            return None
        was_invalid = bool(resource.error)
        change = _changed(resource, obj, resource.source_path)
        if resource.pk is not None:
            self.updated[resource.pk] = resource
        self.count(key[0], 0, int(bool(resource.error)) - int(was_invalid))
        return change

    def _add(self, key: ObjectKey, obj: dict[str, Any]) -> Change:
        created = self.held[key] = self.created[key] = _new_resource(self.cluster, key, obj, "")
        self.count(key[0], 1, int(bool(created.error)))
        return Change(*key, "added")

    def _remove(self, key: ObjectKey, resource: Resource) -> Change:
        del self.held[key]
        if resource.pk is None:
            del self.created[key]
        else:
            self.removed.append(resource.pk)
            self.updated.pop(resource.pk, None)
        self.count(key[0], -1, -int(bool(resource.error)))
        return Change(*key, "removed")

    def write(self, changed: bool) -> None:
        """Make the gathered writes: removals first, so that an object removed and added again
        in one batch is inserted anew; one inventory version for every change."""
        if changed:
            version = _next_version(self.cluster)
            for resource in [*self.created.values(), *self.updated.values()]:
                resource.version = version
        Resource.objects.filter(pk__in=self.removed).delete()
        Resource.objects.bulk_create(list(self.created.values()), batch_size=500)
        for resource in self.updated.values():  # a save each: bulk_update's CASE per column costs more
            resource.save(update_fields=[*UPDATED_COLUMNS, "version"])
        Resource.objects.filter(pk__in=self.touched).update(last_seen=Now())
        _recount(self.cluster, self.deltas)


def _held(cluster: Cluster, keys: set[ObjectKey]) -> dict[ObjectKey, Resource]:
    """The stored objects of `keys`, locked for the caller's transaction, in one read."""
    if not keys:
        return {}
    names = {name for _, _, name in keys}
    rows = Resource.objects.select_for_update().filter(cluster=cluster, name__in=names)
    return {resource.key: resource for resource in rows if resource.key in keys}


def events_apply(cluster: Cluster, events: Sequence[Event]) -> list[Change | None]:
    """Apply watch events (ADDED, MODIFIED, DELETED) in order, keeping the kinds' counts; the
    change each made, if any. One read of the objects they name and one write of each sort per
    batch: under a burst, a statement per event put the inventory a minute behind the cluster."""
    # Stored without last-applied-configuration, credentials redacted.
    stored = [(event_type, records.stored(obj)) for event_type, obj in events]
    keyed = [(event_type, obj, records.identity(obj)) for event_type, obj in stored]
    # Inside a watch's transaction (events.watch_events_apply) no savepoint is needed: a failure
    # undoes the whole batch, which is then stored event by event.
    with transaction.atomic(savepoint=False):
        batch = _EventBatch(cluster, _held(cluster, {key for _, _, key in keyed if key is not None}))
        changes = [_event_store(batch, event_type, obj, key) for event_type, obj, key in keyed]
        batch.write(changed=any(changes))
        _announce(cluster, [change for change in changes if change is not None])
    return changes


def _event_store(batch: _EventBatch, event_type: str, obj: dict[str, Any], key: ObjectKey | None) -> Change | None:
    if key is None:
        logger.warning("cluster %s: %s event for an object without kind or name", batch.cluster, event_type)
        return None
    return batch.store(event_type, key, obj)


def event_apply(cluster: Cluster, event_type: str, obj: dict[str, Any]) -> Change | None:
    """Apply one watch event (ADDED, MODIFIED, DELETED), keeping the kind's counts; returns the
    change it made, if any."""
    return events_apply(cluster, [(event_type, obj)])[0]


def returned_store(cluster: Cluster, obj: dict[str, Any]) -> Change | None:
    """Store an object the cluster's API server returned (a patch's answer, a read after a
    conflict), unless the inventory holds a newer version of it already (a watch event may have
    come first). The cluster's write lock first, then the object's row (locks.py)."""
    key = records.identity(obj)
    if key is None:
        return None
    with transaction.atomic():
        cluster_write_lock(cluster.pk)
        held = (
            Resource.objects.select_for_update()
            .filter(cluster=cluster, kind=key[0], namespace=key[1], name=key[2])
            .values_list("resource_version", flat=True)
            .first()
        )
        if held is not None and rv_order(held, object_rv(obj)) == 1:
            return None
        return event_apply(cluster, "MODIFIED", obj)


@contextmanager
def object_locked(cluster: Cluster, pk: int) -> Iterator[Resource | None]:
    """The stored object (None when it is gone), locked for a change in place
    (`object_replace`) in one transaction with whatever the caller records beside it (a patch's
    audit row): the cluster's write lock first, then the object's row (locks.py)."""
    with transaction.atomic():
        cluster_write_lock(cluster.pk)
        yield Resource.objects.select_for_update().filter(cluster=cluster, pk=pk).first()


def object_replace(cluster: Cluster, resource: Resource, obj: dict[str, Any]) -> Resource:
    """Store `obj` as the new content of `resource` (locked by `object_locked`), with the
    columns, counts, version and announcement of every write; the resource as stored now."""
    if records.identity(obj) != resource.key:
        raise ValueError(f"{resource}: a replacement must keep the object's kind, namespace and name")
    event_apply(cluster, "MODIFIED", obj)
    resource.refresh_from_db()
    return resource


# At most this many messages about objects that could not be stored are kept per kind.
REJECTED_KEPT = 20


def record_list(cluster: Cluster, kind: str, *, resource_version: str = "", rejected: Iterable[str] = ()) -> None:
    """A successful full list of one kind: clears the error, refreshes counts, and keeps the
    messages of the objects that could not be stored at all."""
    stored = Resource.objects.filter(cluster=cluster, kind=kind)
    SyncState.objects.update_or_create(
        cluster=cluster,
        kind=kind,
        defaults={
            "last_list_at": Now(),  # the database's clock, as freshness reads it
            "resource_version": resource_version,
            "last_error": "",
            "last_error_from": "",
            "count": stored.count(),
            "invalid": stored.exclude(error="").count(),
            "rejected": [redact(message) for message in rejected][:REJECTED_KEPT],
        },
    )


def record_error(cluster: Cluster, kinds: Iterable[str], message: str, *, source: str = "list") -> None:
    """A list (`source` "list") or a watch ("watch") of these kinds failed. Whether a watch is
    connected is the watch's to say: a failed resync leaves it as it is, and a watch that
    connects clears only an error a watch recorded."""
    for kind in kinds:
        SyncState.objects.update_or_create(
            cluster=cluster,
            kind=kind,
            defaults={"last_error": redact(message), "last_error_at": Now(), "last_error_from": source},
        )
