"""Server cost of the dashboard's pages for a synthetic cluster (2,000 models x 300 runtimes by
default): the matrix page and its htmx requests, a model page and its near-miss panel, the fleet
page and the lint page. Each is requested in-process with Django's test client as a signed-in
viewer, first new (caches cleared) and then repeated; prints server CPU (time.process_time) and
wall time per request and the answer's bytes, raw and gzipped. Asserts nothing.

Run: `python -m benchmarks.pages [--models N --runtimes N --repeat N --profile PATH]`
(--profile LABEL prints cProfile's top items of that request's new run, e.g. --profile "lint page").
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import gzip
import pstats
import statistics
import time
from collections.abc import Callable
from functools import partial

from benchmarks.django_setup import setup_django

CLUSTER = "synthetic"
# A small cluster whose pages are read first, so that "new" measures what a page costs for a
# cluster's new build, not this process's first imports and template compilation.
WARM = "warm"


def seed(name: str, models: int, runtimes: int) -> None:
    """A synthetic cluster, stored and built as benchmarks.matrix_page does."""
    import matching
    from benchmarks.matrix import store
    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory.services import ClusterSpec, cluster_register
    from matrix.services import matrix_rebuild

    cluster = cluster_register(ClusterSpec(name, "manifests"))
    runtime_objects = [matching.with_crd_defaults(obj) for obj in synthetic_runtimes(runtimes)]
    model_objects = [
        matching.with_crd_defaults(obj) for obj in synthetic_models(models, runtime_objects, signatures=50)
    ]
    store(cluster, runtime_objects + model_objects)
    matrix_rebuild(cluster)


def page_paths(cluster: str) -> list[tuple[str, str, dict[str, str]]]:
    """(label, path, headers) of every request a reader's browser makes for the four pages."""
    from inventory.models import MODEL_KINDS, Resource

    model = Resource.objects.filter(cluster__name=cluster, kind__in=MODEL_KINDS).order_by("name").first()
    assert model is not None, f"cluster {cluster} has no model"
    matrix = f"/matrix/?cluster={cluster}"
    partial = {"HX-Request": "true"}
    return [
        ("matrix page", matrix, {}),
        ("matrix grid (htmx)", matrix + "&status=excluded", partial),
        ("matrix counts (htmx)", f"/matrix/counts/?cluster={cluster}&namespace=_cluster", partial),
        ("model page", f"/models/{model.pk}/", {}),
        ("model near-misses (htmx)", f"/models/{model.pk}/near-misses/", partial),
        ("fleet page", "/fleet/", {}),
        ("lint page, fixes pending", f"/lint/?cluster={cluster}", {}),
        ("lint page", f"/lint/?cluster={cluster}", {}),
    ]


def prove_lint(cluster: str) -> float:
    """Run what the lint proving task runs (lint.proving) for the cluster; its CPU seconds."""
    from inventory.models import Cluster
    from lint.proving import lint_proofs_refresh

    started = time.process_time()
    lint_proofs_refresh(Cluster.objects.get(name=cluster))
    return time.process_time() - started


def measure(request: Callable[[], bytes], repeat: int) -> tuple[float, float, int, int]:
    """Median CPU ms and wall ms over `repeat` requests, raw and gzipped bytes of the last."""
    cpu, wall, body = [], [], b""
    for _ in range(repeat):
        started_cpu, started_wall = time.process_time(), time.perf_counter()
        body = request()
        cpu.append((time.process_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started_wall) * 1000)
    return statistics.median(cpu), statistics.median(wall), len(body), len(gzip.compress(body))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=2_000)
    parser.add_argument("--runtimes", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3, help="repeated requests measured (median)")
    parser.add_argument("--profile", default="", help="profile the new request of this label")
    parser.add_argument("--sort", default="cumulative", help="cProfile order: cumulative or tottime")
    args = parser.parse_args()
    database = setup_django()

    from django.conf import settings
    from django.contrib.auth.models import User
    from django.core.cache import caches
    from django.test import Client

    from access.models import EVERY_CLUSTER, Grant, Role
    from lint.tasks import lint_prove_task

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    # As deployed, queries are not recorded (static files stay served from the folders that
    # DEBUG chose when the settings loaded: nothing to collect).
    settings.DEBUG = False

    # Matrix builds and pages that find the lint fixes unproven ask for the proving task: no
    # broker here, the benchmark runs the task's work itself before "lint page".
    setattr(lint_prove_task, "delay", lambda cluster_id: None)  # noqa: B010
    seed(WARM, 40, 8)
    started = time.perf_counter()
    seed(CLUSTER, args.models, args.runtimes)
    print(f"database: {database}; {args.models:,} models x {args.runtimes:,} runtimes seeded and built in "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    # The seeded grid is this process's heap, which no web worker holds: frozen, so that a full
    # collection of it is not counted in a request (it put the near-miss panel's first view at
    # 190-220 ms instead of 105-112).
    gc.collect()
    gc.freeze()
    reader = User.objects.create_user("bench-reader")
    Grant.objects.create(user=reader, role=Role.VIEWER, cluster=EVERY_CLUSTER)
    client = Client()
    client.force_login(reader)
    prove_lint(WARM)
    for _label, path, headers in page_paths(WARM):
        client.get(path, headers=headers)

    def clear_caches() -> None:
        for alias in settings.CACHES:
            caches[alias].clear()

    print(f"{'request':<26} {'status':>6} {'new cpu ms':>10} {'new wall':>9} {'again cpu':>9} {'again wall':>10} "
          f"{'bytes':>9} {'gzipped':>8}")  # fmt: skip
    failed: list[str] = []
    for label, path, headers in page_paths(CLUSTER):
        statuses: list[int] = []

        def get(path: str = path, headers: dict[str, str] = headers, statuses: list[int] = statuses) -> bytes:
            response = client.get(path, headers=headers)
            statuses.append(response.status_code)
            return response.content

        if label == "lint page":
            print(f"{'lint proving task':<26} {'':>6} {prove_lint(CLUSTER) * 1000:>10.1f}")
        clear_caches()
        profiler = cProfile.Profile() if args.profile and args.profile == label else None
        new_cpu, new_wall, _, _ = measure(get if profiler is None else partial(profiler.runcall, get), 1)
        cpu, wall, raw, zipped = measure(get, args.repeat)
        print(f"{label:<26} {statuses[-1]:>6} {new_cpu:>10.1f} {new_wall:>9.1f} {cpu:>9.1f} {wall:>10.1f} "
              f"{raw:>9,} {zipped:>8,}")  # fmt: skip
        failed += [label] if set(statuses) != {200} else []
        if profiler is not None:  # the new request: the one that makes what the repeated ones reuse
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(30)
    print("new: the first request for this build (Django's cache cleared); again: median of the repeated requests;")
    print("CPU is this process's, in ms")
    if failed:
        raise SystemExit(f"not answered 200: {', '.join(failed)}")
    print("every request answered 200")


if __name__ == "__main__":
    main()
