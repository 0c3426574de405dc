"""Build the image for amd64 and arm64 into one podman manifest list and smoke-check each.

`make image-multiarch` (as root), not part of `make test`: under QEMU's emulation the arm64 build
(pip installing the pinned requirements, collectstatic, the SBOM) takes far longer than the suite
may. Each architecture is built the way the image test builds (tests/ops/image.py), kept under
`<manifest>-<arch>` and added to the manifest list; then, from the image's root filesystem under
chroot, `platform.machine()` must name the architecture and `manage.py check --deploy` must pass.
It prints each step's time. Without binfmt_misc or QEMU's handler it says what is missing and
builds nothing. Push with `podman manifest push --all <manifest> docker://<registry>/ome-compat:<tag>`.
"""

from __future__ import annotations

import argparse
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.ops.image import (
    QEMU_NAMES,
    Image,
    Timings,
    built_image,
    chroot_argv,
    missing_emulation,
    missing_prerequisites,
    missing_tools,
    run,
)

ROOT = Path(__file__).resolve().parents[2]
# A pip install under emulation is slow; the image test allows 900 s for the whole native build.
BUILD_TIMEOUT = 4 * 3600


def what_is_missing(arches: list[str]) -> list[str]:
    reasons = [missing_tools(), missing_prerequisites(), *(missing_emulation(arch) for arch in arches)]
    return [reason for reason in reasons if reason]


def smoke_check(image: Image, arch: str, data: Path) -> None:
    """The image's Python is of `arch`, and Django's deployment checks pass with its settings."""
    machine = ["python", "-c", "import platform; print(platform.machine())"]
    printed = run(chroot_argv(image, machine, {}, data), timeout=300).strip()
    if printed != QEMU_NAMES[arch]:
        raise AssertionError(f"{arch} image: platform.machine() is {printed!r}, not {QEMU_NAMES[arch]!r}")
    env = {"SECRET_KEY": secrets.token_urlsafe(50), "ALLOWED_HOSTS": "localhost"}
    run(chroot_argv(image, ["python", "manage.py", "check", "--deploy"], env, data), timeout=600)


def build(arch: str, manifest: str, scratch: Path) -> Timings:
    timings = Timings(label=arch, echo=True)
    with built_image(
        ROOT, scratch, timings, arch=arch, keep_as=f"{manifest}-{arch}", build_timeout=BUILD_TIMEOUT
    ) as image:
        run(["podman", "manifest", "add", manifest, f"containers-storage:{image.tag}"], timeout=120)
        with timings.step("smoke check"):
            data = scratch / "data"
            data.mkdir()
            smoke_check(image, arch, data)
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", action="append", choices=sorted(QEMU_NAMES), help="amd64 and arm64 unless given")
    parser.add_argument("--manifest", default="localhost/ome-compat:multiarch")
    args = parser.parse_args(argv)
    arches = args.arch or ["amd64", "arm64"]
    if missing := what_is_missing(arches):
        print("image-multiarch: not built:\n  " + "\n  ".join(missing), file=sys.stderr)
        return 2
    # A list of an earlier run would keep its instances beside the new ones.
    subprocess.run(["podman", "manifest", "rm", args.manifest], capture_output=True, timeout=120)
    run(["podman", "manifest", "create", args.manifest], timeout=120)
    for arch in arches:
        with tempfile.TemporaryDirectory(prefix=f"image-{arch}-") as scratch:
            print(build(arch, args.manifest, Path(scratch)).summary(), flush=True)
    print(run(["podman", "manifest", "inspect", args.manifest], timeout=120))
    return 0


if __name__ == "__main__":
    sys.exit(main())
