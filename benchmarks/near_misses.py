"""Benchmark of the near-miss panel: for models without an auto-selected runtime, the ranking
of every runtime in scope (matching.near_misses) and the fixes of the closest six with their
matrix impact (a what-if each, whatif.fixes.model_near_misses). On the bundled demo, then on a
synthetic cluster. Prints milliseconds per model (median and worst); asserts nothing.

Run: `python -m benchmarks.near_misses [--models N --runtimes N --sample N]`.
"""

from __future__ import annotations

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
    from benchmarks.matrix import demo_and_synthetic, size_parser

    parser = size_parser(__doc__, models=5_000, runtimes=500)
    parser.add_argument("--sample", type=int, default=20)
    args = parser.parse_args()
    print(f"database: {setup_django()}")

    for cluster in demo_and_synthetic(args.models, args.runtimes):
        name = "bundled demo" if cluster.name == "demo" else f"synthetic {args.models} x {args.runtimes}"
        report(name, measure(cluster, args.sample))


if __name__ == "__main__":
    main()
