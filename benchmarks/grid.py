"""Benchmark of matching.grid: the bundled catalog grid and a synthetic 5,000 x 500 grid, under
the default (newest) OME profile and under 17b77eda, and the upgrade diff between them.

Run: `python -m benchmarks.grid` (or `make bench`). Prints pairs per second and peak memory;
it asserts nothing about time.
"""

from __future__ import annotations

import argparse
import gc
import resource
import time
from collections.abc import Sequence
from typing import Any

import matching
from benchmarks.synthetic import ROOT, catalog_objects, synthetic_models, synthetic_runtimes
from matching import parse_model, parse_runtime


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def evaluate(
    models: Sequence[dict[str, Any]], runtimes: Sequence[dict[str, Any]], behaviour: str = matching.DEFAULT_BEHAVIOUR
) -> dict[str, float]:
    """Parse, build the grid, and select for every model in its namespace (verdicts and scores
    of every pair); then the reason texts of a sample of incompatible pairs."""
    gc.collect()
    started = time.perf_counter()
    parsed_models = [parse_model(matching.with_crd_defaults(obj)) for obj in models]
    parsed_runtimes = [parse_runtime(matching.with_crd_defaults(obj)) for obj in runtimes]
    parsed = time.perf_counter()
    result = matching.grid(parsed_models, parsed_runtimes, behaviour=behaviour)
    selected = 0
    for key in result.models:
        if result.select(key).selected is not None:
            selected += 1
    evaluated = time.perf_counter()
    sample = list(result.models)[:50]
    texts = 0
    for key in sample:
        for runtime_key in result.runtimes:
            if result.reason(key, runtime_key):
                texts += 1
    explained = time.perf_counter()
    pairs = len(parsed_models) * len(parsed_runtimes)
    return {
        "models": len(parsed_models),
        "runtimes": len(parsed_runtimes),
        "signatures": len({model.signature for model in parsed_models}),
        "pairs": pairs,
        "selected": selected,
        "parse_s": parsed - started,
        "grid_s": evaluated - parsed,
        "pairs_per_s": pairs / max(evaluated - parsed, 1e-9),
        "reason_texts_per_s": texts / max(explained - evaluated, 1e-9),
        "peak_rss_mib": peak_rss_mib(),
    }


def upgrade_diff(models: Sequence[dict[str, Any]], runtimes: Sequence[dict[str, Any]]) -> None:
    """What the upgrade page computes: every difference between the two profiles, explained."""
    parsed = [parse_model(matching.with_crd_defaults(obj)) for obj in models]
    grid = matching.grid(
        parsed, [parse_runtime(matching.with_crd_defaults(obj)) for obj in runtimes], behaviour="17b77eda"
    )
    started = time.perf_counter()
    found = matching.behaviour_diff(grid, matching.NEWEST_BEHAVIOUR)
    elapsed = time.perf_counter() - started
    print(
        f"\nUpgrade diff of the demo grid, 17b77eda -> {matching.NEWEST_BEHAVIOUR}: {len(found)} differences in {elapsed:.2f} s"
    )


def report(title: str, figures: dict[str, float]) -> None:
    print(f"\n{title}")
    print(
        f"  {figures['models']:,} models ({figures['signatures']:,} distinct signatures) x "
        f"{figures['runtimes']:,} runtimes = {figures['pairs']:,} pairs; {figures['selected']:,} models get a runtime"
    )
    print(
        f"  parse: {figures['parse_s']:.2f} s   grid + selection: {figures['grid_s']:.2f} s "
        f"= {figures['pairs_per_s']:,.0f} pairs/s"
    )
    print(f"  reason texts on demand: {figures['reason_texts_per_s']:,.0f} per s")
    print(f"  peak RSS of this process so far: {figures['peak_rss_mib']:.0f} MiB")


def pairwise_baseline(models: Sequence[dict[str, Any]], runtimes: Sequence[dict[str, Any]], limit: int) -> float:
    """Pairs per second of calling matching.check for every pair (on a slice of models)."""
    parsed_models = [parse_model(matching.with_crd_defaults(obj)) for obj in models[:limit]]
    parsed_runtimes = [parse_runtime(matching.with_crd_defaults(obj)) for obj in runtimes]
    started = time.perf_counter()
    for model in parsed_models:
        for runtime in parsed_runtimes:
            matching.check(model, runtime)
    return len(parsed_models) * len(parsed_runtimes) / (time.perf_counter() - started)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=5000)
    parser.add_argument("--runtimes", type=int, default=500)
    parser.add_argument("--signatures", type=int, default=500)
    args = parser.parse_args(argv)

    catalog_models = catalog_objects("ClusterBaseModel", "models")
    catalog_runtimes = catalog_objects("ClusterServingRuntime", "runtimes")
    report("Bundled catalog (raw manifests)", evaluate(catalog_models, catalog_runtimes))
    demo_models = catalog_objects("ClusterBaseModel", "models", root=ROOT / "demo")
    report("Bundled demo (catalog models with the metadata the agent records)", evaluate(demo_models, catalog_runtimes))

    runtimes = synthetic_runtimes(args.runtimes)
    models = synthetic_models(args.models, runtimes, signatures=args.signatures)
    grid_figures = evaluate(models, runtimes)
    report(f"Synthetic grid, {args.signatures} signatures", grid_figures)
    distinct = synthetic_models(args.models, runtimes, signatures=args.models, seed=3)
    report("Synthetic grid, every model distinct", evaluate(distinct, runtimes))

    older = evaluate(models, runtimes, behaviour="17b77eda")
    report(f"Synthetic grid, {args.signatures} signatures, judged as OME 17b77eda", older)
    print(
        f"  17b77eda / {matching.DEFAULT_BEHAVIOUR} pairs per second: {older['pairs_per_s'] / grid_figures['pairs_per_s']:.2f}"
    )
    upgrade_diff(demo_models, catalog_runtimes)

    baseline = pairwise_baseline(models, runtimes, limit=20)
    print(
        f"\nmatching.check pair by pair: {baseline:,.0f} pairs/s; "
        f"grid is {grid_figures['pairs_per_s'] / baseline:,.0f}x faster on the synthetic grid"
    )


if __name__ == "__main__":
    main()
