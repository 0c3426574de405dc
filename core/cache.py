"""The one per-process cache scheme: one value per owner, valid for one version of that owner.

An owner is what a value describes (a cluster, a resource, a cluster's namespace); its version
is whatever changes when the value may (an inventory fingerprint, a content hash, a matrix build
generation). Asking with another version replaces the entry; the least recently used owners go
when there are more than the cache's bound, `settings.CACHE_ENTRIES[name]` (docs/configuration.md).
Entries are never invalidated by hand.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, NamedTuple, TypeVar

from django.conf import settings

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

    def has(self, owner: Hashable, version: Version) -> bool:
        with self._lock:
            entry = self._entries.get(owner)
        return entry is not None and entry.version == version
