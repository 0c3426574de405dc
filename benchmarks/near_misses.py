"""Benchmark of the near-miss panel: for models without an auto-selected runtime, the ranking
of every runtime in scope (matching.near_misses) and the fixes of the closest six with their
matrix impact (a what-if each, whatif.fixes.model_near_misses). On the bundled demo, then on a
synthetic cluster. Prints milliseconds per model (median and worst); asserts nothing.

Run: `python -m benchmarks.near_misses [--models N --runtimes N --sample N]`.
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmarks.django_setup import setup_django


def measure(cluster, sample: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    import matching
    from access.scope import SYSTEM
    from inventory.parsed import load_inventory
    from matrix.models import MatrixRow
    from matrix.selectors import current_build
    from whatif.fixes import model_near_misses

    inventory = load_inventory(cluster)
    rows = list(
        MatrixRow.objects.filter(build=current_build(cluster), namespace="")
        .exclude(outcome=MatrixRow.Outcome.SELECTED)
        .select_related("model")[:sample]
    )
    ranking, panel = [], []
    for row in rows:
        parsed = inventory.models.get(row.model.key)
        if parsed is None:
            continue
        started = time.perf_counter()
        matching.near_misses(parsed, inventory.runtimes.values(), "")
        ranked = time.perf_counter()
        model_near_misses(row.model, "", scope=SYSTEM)
        done = time.perf_counter()
        ranking.append((ranked - started) * 1000)
        panel.append((done - ranked) * 1000)
    return {
        "models": len(ranking),
        "runtimes": len(inventory.runtimes),
        "rank_median_ms": statistics.median(ranking) if ranking else 0.0,
        "rank_max_ms": max(ranking, default=0.0),
        "panel_median_ms": statistics.median(panel) if panel else 0.0,
        "panel_max_ms": max(panel, default=0.0),
    }


def report(name: str, figures: dict[str, float]) -> None:
    print(
        f"{name}: {figures['models']:.0f} models without a runtime x {figures['runtimes']:.0f} runtimes: "
        f"ranking {figures['rank_median_ms']:.1f} ms median ({figures['rank_max_ms']:.1f} max), "
        f"panel with fixes and impact {figures['panel_median_ms']:.0f} ms median ({figures['panel_max_ms']:.0f} max)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=5_000)
    parser.add_argument("--runtimes", type=int, default=500)
    parser.add_argument("--sample", type=int, default=20)
    args = parser.parse_args()
    print(f"database: {setup_django()}")

    from benchmarks.matrix import store
    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory.services import ClusterSpec, cluster_register, manifests_load, parse_cluster_setting
    from matrix.services import matrix_rebuild

    demo = cluster_register(parse_cluster_setting("demo=manifests:catalog/runtimes,demo")[0])
    manifests_load(demo, demo.manifests, prune=True)
    matrix_rebuild(demo)
    report("bundled demo", measure(demo, args.sample))

    cluster = cluster_register(ClusterSpec("synthetic", "manifests"))
    runtimes = synthetic_runtimes(args.runtimes)
    store(cluster, runtimes + synthetic_models(args.models, runtimes, signatures=args.models // 5))
    matrix_rebuild(cluster)
    report(f"synthetic {args.models} x {args.runtimes}", measure(cluster, args.sample))


if __name__ == "__main__":
    main()
