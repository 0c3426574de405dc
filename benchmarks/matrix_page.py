"""Size of the matrix page's HTML for a full 50 x 60 page (50 models by 60 runtimes, 3,000
cells) of a synthetic cluster, and of the same page's grid fragment (what htmx swaps). Prints
bytes and bytes per cell; asserts nothing.

Run: `python -m benchmarks.matrix_page [--models N --runtimes N]`.
"""

from __future__ import annotations

import argparse
import time

from benchmarks.django_setup import setup_django


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--runtimes", type=int, default=120)
    args = parser.parse_args()
    database = setup_django()

    from django.conf import settings
    from django.contrib.auth.models import User
    from django.test import Client

    import matching
    from access.models import EVERY_CLUSTER, Grant, Role
    from benchmarks.matrix import store
    from benchmarks.synthetic import synthetic_models, synthetic_runtimes
    from inventory.services import ClusterSpec, cluster_register
    from matrix.services import matrix_rebuild

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    print(f"database: {database}")
    cluster = cluster_register(ClusterSpec("synthetic", "manifests"))
    runtimes = [matching.with_crd_defaults(obj) for obj in synthetic_runtimes(args.runtimes)]
    models = [matching.with_crd_defaults(obj) for obj in synthetic_models(args.models, runtimes, signatures=50)]
    store(cluster, runtimes + models)
    matrix_rebuild(cluster)

    client = Client()
    # Pages are for signed-in readers: a viewer of every cluster, as `manage.py access_grant` makes.
    reader = User.objects.create_user("bench-reader")
    Grant.objects.create(user=reader, role=Role.VIEWER, cluster=EVERY_CLUSTER)
    client.force_login(reader)
    url = "/matrix/?cluster=synthetic&cols=all"
    client.get(url)  # warm: templates compiled, inventory cached
    started = time.perf_counter()
    page = client.get(url)
    elapsed = time.perf_counter() - started
    fragment = client.get(url, headers={"HX-Request": "true"})
    html = page.content.decode()
    cells = html.count("<td")
    rows = html.count("<tr data-m") or html.count("<tr ") - 1
    print(
        f"matrix page, {rows} models x {cells // max(rows, 1)} runtimes = {cells:,} cells (status {page.status_code})"
    )
    print(
        f"  page HTML: {len(page.content):,} bytes = {len(page.content) / 1024:.0f} KiB ({len(page.content) / max(cells, 1):.0f} bytes per cell)"
    )
    print(f"  grid fragment (htmx): {len(fragment.content):,} bytes = {len(fragment.content) / 1024:.0f} KiB")
    print(f"  rendered in {elapsed * 1000:.0f} ms wall (this machine, not asserted)")
    print("  aim (issue 10): under 150 KB for a 50 x 60 page")


if __name__ == "__main__":
    main()
