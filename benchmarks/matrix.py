"""Benchmark of the compatibility matrix: the bundled catalog, then a synthetic cluster of
10,000 models x 1,000 runtimes: full recompute (time, peak memory), and the recompute after one
model changes. Uses DATABASE_URL, or a fresh SQLite file. Prints figures; asserts nothing.

Run: `python -m benchmarks.matrix [--models N --runtimes N]`.
"""

from __future__ import annotations

import argparse
import copy
import resource
import statistics
import time

from benchmarks.django_setup import setup_django


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def store(cluster, objects):  # type: ignore[no-untyped-def]
    from inventory import records
    from inventory.sync import snapshot_apply

    by_kind: dict[str, dict] = {}
    for obj in objects:
        key = records.identity(obj)
        by_kind.setdefault(obj["kind"], {})[key] = obj
    for kind, items in by_kind.items():
        snapshot_apply(cluster, kind, items, prune=True)


def size_parser(description: str | None, *, models: int, runtimes: int) -> argparse.ArgumentParser:
    """The options of a benchmark over demo_and_synthetic: the synthetic cluster's size."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--models", type=int, default=models)
    parser.add_argument("--runtimes", type=int, default=runtimes)
    return parser


def demo_and_synthetic(models: int, runtimes: int):  # type: ignore[no-untyped-def]
    """The bundled demo, then a synthetic cluster of `models` x `runtimes`, each stored with its
    matrix built; yielded one at a time, so that each is measured before the next is made."""
    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory.services import ClusterSpec, cluster_register, manifests_load, parse_cluster_setting
    from matrix.services import matrix_rebuild

    demo = cluster_register(parse_cluster_setting("demo=manifests:catalog/runtimes,demo")[0])
    manifests_load(demo, demo.manifests, prune=True)
    matrix_rebuild(demo)
    yield demo
    cluster = cluster_register(ClusterSpec("synthetic", "manifests"))
    made = synthetic_runtimes(runtimes)
    store(cluster, made + synthetic_models(models, made, signatures=models // 5))
    matrix_rebuild(cluster)
    yield cluster


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=10_000)
    parser.add_argument("--runtimes", type=int, default=1_000)
    parser.add_argument("--signatures", type=int, default=2_000)
    args = parser.parse_args()
    database = setup_django()

    import matching
    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory.models import Resource
    from inventory.services import ClusterSpec, cluster_register, manifests_load, parse_cluster_setting
    from inventory.sync import event_apply
    from matrix.services import matrix_apply_changes, matrix_rebuild

    print(f"database: {database}")
    demo = cluster_register(parse_cluster_setting("demo=manifests:catalog/runtimes,demo")[0])
    manifests_load(demo, demo.manifests, prune=True)
    started = time.perf_counter()
    build = matrix_rebuild(demo)
    print(
        f"bundled demo: {build.models_count} models x {build.runtimes_count} runtimes, {build.rows_count} rows "
        f"in {time.perf_counter() - started:.2f} s"
    )

    cluster = cluster_register(ClusterSpec("synthetic", "manifests"))
    runtimes = [matching.with_crd_defaults(obj) for obj in synthetic_runtimes(args.runtimes)]
    models = [
        matching.with_crd_defaults(obj) for obj in synthetic_models(args.models, runtimes, signatures=args.signatures)
    ]
    started = time.perf_counter()
    store(cluster, runtimes + models)
    print(f"stored {len(models):,} models and {len(runtimes):,} runtimes in {time.perf_counter() - started:.1f} s")

    before = rss_mib()
    started = time.perf_counter()
    build = matrix_rebuild(cluster)
    elapsed = time.perf_counter() - started
    print(
        f"full recompute: {build.models_count:,} models x {build.runtimes_count:,} runtimes "
        f"= {build.models_count * build.runtimes_count:,} pairs, {build.rows_count:,} rows "
        f"in {elapsed:.1f} s; peak RSS {rss_mib():.0f} MiB (was {before:.0f} MiB before the recompute)"
    )

    target = Resource.objects.filter(cluster=cluster, kind="ClusterBaseModel").order_by("name").first()
    timings = []
    for attempt in range(5):
        obj = copy.deepcopy(target.obj)
        obj["spec"]["modelParameterSize"] = ["7B", "1T"][attempt % 2]
        started = time.perf_counter()
        change = event_apply(cluster, "MODIFIED", obj)
        matrix_apply_changes(cluster, [change.to_dict()])
        timings.append((time.perf_counter() - started) * 1000)
        target.refresh_from_db()
    print(
        f"one model changed -> stored and its rows recomputed: median {statistics.median(timings):.0f} ms "
        f"(runs: {', '.join(f'{t:.0f}' for t in timings)} ms)"
    )


if __name__ == "__main__":
    main()
