"""The README's tour, driven in headless Chromium against a running dashboard (`make run`), saving
the screenshots the README shows. Not a test: run it by hand after `make run` is up::

    DATABASE_URL=<the same database make run uses> .venv/bin/python -m tests.browser.tour \\
        --url http://127.0.0.1:8000 --out docs/screenshots

It signs in as the user `tour` (created with the patch permission if missing, in the database
DATABASE_URL names) and goes from the matrix to the seed page's case fixed in one click. On the
bundled demo (a manifest snapshot) the patch changes the dashboard's stored copy only; the next
resync (or `manage.py register_clusters --sync`) puts the folder's version back.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import django

MODEL = "qwen-image-pvc"
RUNTIME = "srt-qwen-image-pipeline"
USER = "tour"
PASSWORD = "tour-of-ome-compat"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"]


def ensure_user() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ome_dashboard.settings")
    # The tour shows the demo as `make run` serves it.
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("API_ANONYMOUS_READ", "true")
    django.setup()
    from django.contrib.auth.models import User

    user, _ = User.objects.get_or_create(username=USER)
    user.set_password(PASSWORD)
    user.save()
    from access.models import Grant, Role

    Grant.objects.get_or_create(user=user, cluster="*", namespace="", defaults={"role": Role.PATCHER})


def tour(url: str, out: Path, chromium: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    from tests.support.grid import cell_class, cell_xpath

    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 900})

        page.goto(f"{url}/matrix/")
        expect(page.locator("#matrix-counts .count").first).to_be_visible()
        page.screenshot(path=str(out / "matrix.png"))

        page.get_by_label("Search models").fill("qwen-image")
        expect(page.locator("tr[data-m]")).to_have_count(4)
        seed = page.locator(cell_xpath(MODEL, RUNTIME))
        seed.hover()
        expect(page.locator("#cell-reason")).to_contain_text("diffusion pipeline required")
        page.screenshot(path=str(out / "matrix-seed-case.png"))

        seed.click()
        expect(page.locator("#ome-reason")).to_be_visible()
        page.screenshot(path=str(out / "cell.png"), full_page=True)

        page.get_by_role("button", name="Make this model match").click()
        expect(page.locator("#merge-patch")).to_be_visible()
        page.screenshot(path=str(out / "patch-preview.png"), full_page=True)

        page.get_by_role("link", name="Sign in to apply").click()
        page.get_by_label("Username").fill(USER)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_role("button", name="Confirm: apply the patch").click()
        expect(page.locator("#outcome h1")).to_have_text("Patch applied")
        expect(page.locator(cell_xpath(MODEL, RUNTIME))).to_have_class(cell_class("selected"), timeout=15_000)
        page.screenshot(path=str(out / "patch-applied.png"), full_page=True)

        page.goto(f"{url}/matrix/?search=qwen-image")
        page.screenshot(path=str(out / "matrix-after.png"))
        browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    args = parser.parse_args(argv)
    ensure_user()
    tour(args.url.rstrip("/"), args.out, args.chromium)
    print(f"screenshots written to {args.out}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
