"""Every benchmark still runs: each is started as documented, on a tiny input, and must finish
and print its figures. (Several had stopped working unnoticed when sign-in and the kubeconfig
directory came in.) A run's id is its module, then the variant it runs, if any. The figures
themselves are not asserted; benchmarks/burst.py runs in tests/ops/test_soak.py."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings

from tests.support.processes import environ_without

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TINY = ["--models", "40", "--runtimes", "8"]
SCALE_OUT = [
    "--clusters",
    "4",
    "--models",
    "8",
    "--runtimes",
    "4",
    "--changes",
    "2",
    "--lease",
    "10",
    "--timeout",
    "240",
]
RUNS = {
    "grid": (TINY, "grid is"),
    "matrix": (TINY, "full recompute: 40 models x 8 runtimes"),
    "matrix_page": (TINY, "(status 200)"),
    "pages": ([*TINY, "--repeat", "1"], "every request answered 200"),
    "near_misses": (TINY, "panel with fixes and impact"),
    "inventory_sync": (TINY, "stored: 48 resources"),
    "fleet": (["--clusters", "2", *TINY], "(HTTP 200"),
    "api_latency": (
        [*TINY, "--clients", "2", "--requests", "2", "--rounds", "1", "--workers", "1", "--threads", "2"],
        "viewed page revalidated (304)",
    ),
    "export_memory": (TINY, "json, reasons"),
    "admission": ([*TINY, "--requests", "3"], "p95"),
    "many_clusters": (["--clusters", "2", "--models", "8", "--runtimes", "4", "--changes", "2"], "p95"),
    "scale_out": (
        # Its own waits end within --timeout each (a third of it for the restarted worker's share).
        SCALE_OUT,
        ("held again by the others after", "matrices equal to a full rebuild: 4 of 4"),
    ),
    "scale_out --freeze": (
        [*SCALE_OUT, "--freeze"],
        ("SIGSTOPped; all", "after the SIGSTOP", "matrices equal to a full rebuild: 4 of 4", "fair shares again"),
    ),
}


@pytest.mark.parametrize("run_id", sorted(RUNS))
def test_the_benchmark_runs_and_prints_its_figures(run_id: str) -> None:
    name = run_id.split()[0]
    arguments, expected = RUNS[run_id]
    # Each benchmark makes its own database and servers: none of the suite's may leak in.
    env = environ_without("DATABASE_URL", "DJANGO_SETTINGS_MODULE", "REDIS_URL", "OME_KUBECONFIG_DIR")

    run = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", *arguments],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # generous: the suite also runs on a machine kept busy by others
    )

    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for line in (expected,) if isinstance(expected, str) else expected:
        assert line in run.stdout, run.stdout[-3000:]
