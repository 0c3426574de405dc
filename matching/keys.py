"""Object keys `(kind, namespace, name)`: written in texts and JSON, and read back from what a
user sends."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, overload

from .types import ObjectKey


class KeyReference(NamedTuple):
    """An object as a user names it; None where the reference leaves the part open."""

    kind: str | None
    namespace: str | None
    name: str


@overload
def key_dict(key: ObjectKey) -> dict[str, str]: ...
@overload
def key_dict(key: None) -> None: ...
@overload
def key_dict(key: ObjectKey | None) -> dict[str, str] | None: ...
def key_dict(key: ObjectKey | None) -> dict[str, str] | None:
    """The key as JSON: {"kind", "namespace", "name"}; None stays None."""
    return None if key is None else {"kind": key[0], "namespace": key[1], "name": key[2]}


def key_text(key: ObjectKey) -> str:
    """The key in prose: `Kind namespace/name`, or `Kind name` when cluster-scoped."""
    return f"{key[0]} {key[1]}/{key[2]}" if key[1] else f"{key[0]} {key[2]}"


def key_path(key: ObjectKey) -> str:
    """The key as a reference: `Kind/namespace/name`, or `Kind/name` when cluster-scoped (what
    `parse_key_reference` reads back)."""
    return f"{key[0]}/{key[1]}/{key[2]}" if key[1] else f"{key[0]}/{key[2]}"


def parse_key_reference(value: object) -> KeyReference:
    """A reference to an object: the text `name`, `Kind/name` or `Kind/namespace/name`, a mapping
    {"kind", "namespace", "name"}, or a (kind, namespace, name) sequence. An empty kind counts as
    not given. Raises ValueError saying what is wrong."""
    if isinstance(value, str):
        parts = value.strip().split("/")
        if len(parts) > 3:
            raise ValueError(f"{value!r} is not a name, Kind/name or Kind/namespace/name")
        kind = parts[0] if len(parts) > 1 else None
        namespace = parts[1] if len(parts) == 3 else None
        name: object = parts[-1]
    elif isinstance(value, Mapping):
        kind, namespace, name = value.get("kind"), value.get("namespace"), value.get("name")
    elif isinstance(value, list | tuple) and len(value) == 3:
        kind, namespace, name = value
    else:
        raise ValueError(f"{value!r} is not Kind/[namespace/]name, a name or a (kind, namespace, name) key")
    if not all(part is None or isinstance(part, str) for part in (kind, namespace, name)):
        raise ValueError(f"{value!r} is not a (kind, namespace, name) key")
    if not name or not isinstance(name, str):
        raise ValueError("the name is empty")
    return KeyReference(kind or None, namespace, name)
