"""Benchmark of a live cluster's full sync: 10,000 models and 1,000 runtimes (clones of the
bundled catalog) served by the fake Kubernetes API in a child process, listed through the real
`kubernetes` client and stored by inventory.live.resync.cluster_resync. Prints the time of a list
alone, of the first resync (everything added) and of a second one (nothing changed), and this
process's peak memory (ru_maxrss; the fake server's memory is its own). Asserts nothing.

Uses DATABASE_URL, or a fresh SQLite file. Run: `python -m benchmarks.inventory_sync
[--models N --runtimes N]`.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.django_setup import setup_django

REPO = Path(__file__).resolve().parent.parent


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def start_fake(objects: list[dict[str, Any]], folder: Path) -> tuple[subprocess.Popen[str], Path]:
    """The fake API server in a child process, serving `objects`; returns it and its kubeconfig."""
    manifests = folder / "objects.json"
    manifests.write_text(json.dumps(objects))
    kubeconfig = folder / "kubeconfig.yaml"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.fakes.kube_api",
            "--manifests",
            str(manifests),
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # it prints its URL, the kubeconfig path, then the object count
        if match := re.match(r"loaded (\d+) objects", line):
            assert int(match.group(1)) == len(objects), line
            return proc, kubeconfig
    raise RuntimeError(f"the fake API server exited with {proc.wait()}")


def timed(label: str, function: Any, *args: Any, **kwargs: Any) -> Any:
    started = time.perf_counter()
    value = function(*args, **kwargs)
    print(f"{label}: {time.perf_counter() - started:.2f} s")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=10_000)
    parser.add_argument("--runtimes", type=int, default=1_000)
    args = parser.parse_args()
    database = setup_django()

    from django.test import override_settings

    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory import kube
    from inventory.live.resync import cluster_resync
    from inventory.models import Cluster, Kind, Resource

    runtimes = synthetic_runtimes(args.runtimes)
    models = synthetic_models(args.models, runtimes, signatures=500)
    print(f"database: {database}")
    print(f"objects: {len(models)} models, {len(runtimes)} runtimes")
    with tempfile.TemporaryDirectory(prefix="ome-bench-kube-") as folder, override_settings(OME_KUBECONFIG_DIR=folder):
        started = time.perf_counter()
        fake, kubeconfig = start_fake(models + runtimes, Path(folder))
        print(f"fake API server (child process) loaded them in {time.perf_counter() - started:.2f} s")
        try:
            cluster = Cluster.objects.create(name="bench", source=Cluster.Source.KUBECONFIG, kubeconfig=str(kubeconfig))
            print(f"peak RSS before syncing: {rss_mib():.0f} MiB")

            api = kube.client_for(cluster)
            started = time.perf_counter()
            listed = {kind: len(kube.list_kind(api, kind)[0]) for kind in Kind.values}
            elapsed = time.perf_counter() - started
            kube.close(api)
            total = sum(listed.values())
            print(
                f"list only (5 kinds, pages of {kube.LIST_PAGE_SIZE}): {elapsed:.2f} s, {total / elapsed:,.0f} objects/s"
            )

            first = timed("first full resync (list + store, all added)", cluster_resync, cluster)
            assert not first.errors, first.errors
            second = timed("second full resync (list + compare, nothing changed)", cluster_resync, cluster)
            assert not second.errors, second.errors
            for kind in Kind.values:
                counts = second.applied.counts[kind]
                print(f"  {kind}: {listed[kind]} listed, {counts.unchanged} unchanged")
            print(f"stored: {Resource.objects.filter(cluster=cluster).count()} resources")
            print(f"peak RSS: {rss_mib():.0f} MiB")
        finally:
            fake.terminate()
            fake.wait(10)


if __name__ == "__main__":
    main()
