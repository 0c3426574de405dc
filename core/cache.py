"""The one per-process cache scheme: one value per owner, valid for one version of that owner.

An owner is what a value describes (a cluster, a resource, a cluster's namespace); its version
is whatever changes when the value may (an inventory fingerprint, a content hash, a matrix build
generation). Asking with another version replaces the entry; the least recently used owners go
when there are more than the cache's bound, `settings.CACHE_ENTRIES[name]` (docs/configuration.md).
Entries are never invalidated by hand.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, NamedTuple, TypeVar

from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db.models import QuerySet
from psycopg.types.json import Json, Jsonb

Version = TypeVar("Version", bound=Hashable)
V = TypeVar("V")


class Entry(NamedTuple, Generic[Version, V]):
    version: Version
    value: V


class VersionedCache(Generic[Version, V]):
    """Thread-safe. A value is made outside the lock: a race may make it twice, either is right."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._entries: OrderedDict[Hashable, Entry[Version, V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, owner: Hashable, version: Version, make: Callable[[Entry[Version, V] | None], V]) -> V:
        """The owner's value at `version`; else `make(stale)` is stored, where `stale` is the
        entry held for another version (None if none), for makers that can update it."""
        with self._lock:
            stale = self._entries.get(owner)
            if stale is not None:
                self._entries.move_to_end(owner)
                if stale.version == version:
                    return stale.value
        value = make(stale)
        with self._lock:
            self._entries[owner] = Entry(version, value)
            self._entries.move_to_end(owner)
            while len(self._entries) > self.bound:
                self._entries.popitem(last=False)
        return value

    @property
    def bound(self) -> int:
        """The most owners held (read when storing, so that a changed setting applies)."""
        bound: int = settings.CACHE_ENTRIES[self.name]
        return bound

    def peek(self, owner: Hashable, version: Version) -> V | None:
        """The owner's value at `version` if it is held, else None (nothing is made)."""
        with self._lock:
            entry = self._entries.get(owner)
            if entry is None or entry.version != version:
                return None
            self._entries.move_to_end(owner)
            return entry.value

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


def query_key(query: QuerySet[Any]) -> tuple[str, tuple[str, ...]] | None:
    """An owner naming what `query` reads: its SQL and its parameters, each as a text equal for
    equal values (None: the query can match nothing). Raw parameters are no key: on PostgreSQL a
    JSON value travels in psycopg's Json/Jsonb wrappers, which compare by identity, and lists are
    not hashable."""
    try:
        sql, params = query.query.sql_with_params()
    except EmptyResultSet:
        return None
    return sql, tuple(_param_text(param) for param in params)


def _param_text(param: object) -> str:
    if isinstance(param, (Json, Jsonb)):  # their repr shortens long values
        dumps = param.dumps or json.dumps
        return f"{type(param).__name__}({dumps(param.obj)!r})"
    return repr(param)
