"""Benchmark of issue 14's checks and fleet: `matching diff` between two trees of the bundled
catalog (its runtimes and the demo's models with recorded metadata) that differ in one runtime
and in 50 runtimes; then the fleet page and API, server-side, for 20 clusters of 2,000 models
and 300 runtimes each (four variants of the synthetic runtimes, so clusters disagree).
Uses DATABASE_URL, or a fresh SQLite file. Prints figures; asserts nothing.

Run: `python -m benchmarks.fleet [--clusters N --models N --runtimes N]`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.django_setup import setup_django
from benchmarks.synthetic import ROOT

TREE_FOLDERS = ("catalog/runtimes", "demo")


def _trees(changed: int) -> tuple[Path, Path]:
    """Two copies of the bundled catalog; in HEAD `changed` runtime files get priority 7 on
    every entry: OME's picks first (by file path), so that the change moves picks."""
    import matching

    root = Path(tempfile.mkdtemp(prefix="ome-bench-diff-"))
    base, head = root / "base", root / "head"
    for folder in TREE_FOLDERS:
        shutil.copytree(ROOT / folder, base / folder)
    shutil.copytree(base, head)
    tree = matching.read_tree([base])
    picks = {tree.grid.select(key).selected for key in tree.models}
    by_file: dict[Path, set[str]] = {}
    for origin, _obj, value in matching.read_objects([head / "catalog/runtimes"]):
        by_file.setdefault(Path(origin.file), set()).add(value.key[2])
    editable = [path for path in by_file if "priority:" in path.read_text()]
    files = sorted(editable, key=lambda path: (not by_file[path] & picks, str(path)))
    for path in files[:changed]:
        path.write_text(re.sub(r"priority: \d+", "priority: 7", path.read_text()))
    return base, head


def bench_diff(changed: int) -> None:
    import matching

    base, head = _trees(changed)
    started = time.perf_counter()
    trees = matching.read_tree([base]), matching.read_tree([head])
    read = time.perf_counter() - started
    started = time.perf_counter()
    result = matching.diff(*trees)
    compared = time.perf_counter() - started
    started = time.perf_counter()
    for fmt in matching.REPORT_FORMATS:
        matching.render([("base -> head", result)], matching.verdict([("", result)], frozenset()), fmt)
    rendered = time.perf_counter() - started
    started = time.perf_counter()
    command = [sys.executable, "-m", "matching", "diff", str(base), str(head), "--json", "--fail-on", "lost-runtime"]
    subprocess.run(command, capture_output=True, check=False, cwd=ROOT)
    wall = time.perf_counter() - started
    counts = result.counts()
    print(
        f"matching diff, {changed} runtime(s) changed: {len(result.objects)} objects differ, "
        f"{result.rows_compared} rows compared, {len(result.rows)} rows / "
        f"{sum(len(r.cells) for r in result.rows)} cells change ({counts['pick-changed']} picks, {counts['score-changed']} scores); "
        f"read both trees {read:.2f} s, diff {compared * 1000:.0f} ms, four formats {rendered * 1000:.0f} ms; "
        f"`python -m matching diff` end to end {wall:.2f} s"
    )
    shutil.rmtree(base.parent)


def _fleet_clusters(count: int, models: int, runtimes: int) -> None:
    import matching
    from benchmarks.matrix import store
    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory.services import ClusterSpec, cluster_register
    from matrix.services import matrix_rebuild

    variants = [[matching.with_crd_defaults(obj) for obj in synthetic_runtimes(runtimes, seed=1 + i)] for i in range(4)]
    shapes = [matching.with_crd_defaults(obj) for obj in synthetic_models(models, variants[0], signatures=400)]
    started = time.perf_counter()
    for index in range(count):
        cluster = cluster_register(ClusterSpec(f"cluster-{index:02}", "manifests"))
        store(cluster, variants[index % 4] + shapes)
        matrix_rebuild(cluster)
    print(
        f"stored and built {count} clusters of {models:,} models x {runtimes} runtimes "
        f"in {time.perf_counter() - started:.0f} s"
    )


def bench_fleet(count: int, models: int, runtimes: int) -> None:
    from django.test import Client
    from django.test.utils import override_settings

    _fleet_clusters(count, models, runtimes)
    _cold_parts()
    client = Client()
    with override_settings(ALLOWED_HOSTS=["testserver"], API_ANONYMOUS_READ=True):
        for label in ("first request", "second", "third"):
            timings = {}
            for name, url in (
                ("page", "/fleet/"),
                ("page, disagreeing only, page 2", "/fleet/?only=disagree&page=2"),
                ("API rows", "/api/v1/fleet/?only=disagree"),
                ("API runtimes", "/api/v1/fleet/runtimes/"),
            ):
                started = time.perf_counter()
                response = client.get(url)
                timings[name] = (time.perf_counter() - started, response.status_code, len(response.content))
            print(
                f"fleet of {count} clusters, {label}: "
                + "; ".join(
                    f"{name} {secs:.2f} s (HTTP {code}, {size // 1024} KiB)"
                    for name, (secs, code, size) in timings.items()
                )
            )


def _cold_parts() -> None:
    """What the first fleet request after a change pays, part by part: each cluster's rows
    read from its build, its lint (shared with the lint page), its InferenceService verdicts."""
    from access.scope import SYSTEM
    from fleet.services import cluster_data
    from inventory.selectors import cluster_list
    from isvcs.services import isvc_verdicts
    from lint.selectors import lint_report_get

    clusters = list(cluster_list(SYSTEM))
    parts = {}
    for name, step in (
        ("rows read", cluster_data),
        ("lint", lambda cluster: lint_report_get(cluster, scope=SYSTEM)),
        ("InferenceService verdicts", lambda cluster: isvc_verdicts(cluster, scope=SYSTEM)),
    ):
        started = time.perf_counter()
        for cluster in clusters:
            step(cluster)
        parts[name] = time.perf_counter() - started
    print(
        f"first fleet request's parts, {len(clusters)} clusters: "
        + "; ".join(f"{k} {v:.1f} s" for k, v in parts.items())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--models", type=int, default=2_000)
    parser.add_argument("--runtimes", type=int, default=300)
    args = parser.parse_args()
    bench_diff(1)
    bench_diff(50)
    print(f"database: {setup_django()}")
    bench_fleet(args.clusters, args.models, args.runtimes)


if __name__ == "__main__":
    main()
