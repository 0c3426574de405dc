"""Manifest folders -> the same object dicts a live cluster returns (CRD defaults applied)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matching
from matching import read_documents

from .models import Kind
from .records import identity


@dataclass
class ManifestSnapshot:
    """What a set of manifest files holds, by kind; `errors` has one line per bad document."""

    objects: dict[str, dict[tuple[str, str, str], dict[str, Any]]] = field(default_factory=lambda: defaultdict(dict))
    paths: dict[tuple[str, str, str], str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


def read_manifests(paths: Iterable[str | Path]) -> ManifestSnapshot:
    """Read files and folders; of two documents with the same identity the later one wins, as
    when both are applied in order."""
    snapshot = ManifestSnapshot()
    for document in read_documents(paths):
        if document.error is not None or document.obj is None:
            snapshot.errors.append(f"{document.where}: {document.error}")
            continue
        kind = document.obj.get("kind")
        if kind not in Kind.values:
            snapshot.skipped[str(kind)] += 1
            continue
        obj = matching.as_applied(document.obj)
        key = identity(obj)
        if key is None:
            snapshot.errors.append(f"{document.where}: {kind}: metadata.name: missing or not a string")
            continue
        try:
            matching.parse_object(obj)
        except matching.ManifestError as error:
            snapshot.errors.append(f"{document.where}: {error}")
        snapshot.objects[str(kind)][key] = obj
        snapshot.paths[key] = document.where
    return snapshot
