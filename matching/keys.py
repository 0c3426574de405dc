"""Object keys `(kind, namespace, name)` as the project writes them in texts and JSON."""

from __future__ import annotations

from .types import ObjectKey


def key_dict(key: ObjectKey | None) -> dict[str, str] | None:
    return None if key is None else {"kind": key[0], "namespace": key[1], "name": key[2]}


def key_text(key: ObjectKey) -> str:
    return f"{key[0]} {key[1]}/{key[2]}" if key[1] else f"{key[0]} {key[2]}"
