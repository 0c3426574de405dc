"""The bundled demo cluster (catalog runtimes + demo/) for tests, stored once per test module.

Parsing the demo's YAML is most of the cost, so the parsed snapshot is shared through a JSON
file by every module and xdist worker of a run.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.test import override_settings

from inventory.manifests import read_manifests
from inventory.models import Cluster, Kind
from inventory.sync import record_list, snapshot_apply
from matching.files import manifest_files
from matrix.services import matrix_rebuild

DEMO_FOLDERS = ("catalog/runtimes", "demo")


def demo_snapshot(cache_dir: Path) -> dict[str, list[Any]]:
    """kind -> [[key, object], ...] of the demo as loaded (CRD defaults applied)."""
    paths = [Path(settings.BASE_DIR) / folder for folder in DEMO_FOLDERS]
    stamp = hashlib.sha256()
    for path in manifest_files(paths):
        info = path.stat()
        stamp.update(f"{path}:{info.st_mtime_ns}:{info.st_size};".encode())
    cache = cache_dir / f"demo-{stamp.hexdigest()[:16]}.json"
    if cache.exists():
        return json.loads(cache.read_text())  # type: ignore[no-any-return]
    snapshot = read_manifests(paths)
    data = {kind: [[list(key), obj] for key, obj in objects.items()] for kind, objects in snapshot.objects.items()}
    partial = cache.with_suffix(f".{os.getpid()}.part")
    partial.write_text(json.dumps(data))
    os.replace(partial, cache)
    return data


@contextmanager
def stored_demo(blocker: Any, cache_dir: Path, *, name: str = "demo") -> Iterator[Cluster]:
    """Commit the demo cluster and its matrix outside the tests' transactions (so every test of
    a module sees it; what a test changes is rolled back), and delete it afterwards."""
    data = demo_snapshot(cache_dir)
    with blocker.unblock(), override_settings(MATRIX_UPDATE_ON_CHANGE=False, LINT_PROVE_ON_UPDATE=False):
        cluster = Cluster.objects.create(name=name, source=Cluster.Source.MANIFESTS, manifests=list(DEMO_FOLDERS))
        for kind in Kind.values:
            items = data.get(kind, [])
            snapshot_apply(cluster, kind, {tuple(key): obj for key, obj in items}, prune=True)
            record_list(cluster, kind)
        matrix_rebuild(cluster)
    try:
        yield cluster
    finally:
        with blocker.unblock():
            Cluster.objects.filter(pk=cluster.pk).delete()
