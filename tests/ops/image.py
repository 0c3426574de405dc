"""Build the Dockerfile's image with podman and run its commands from the image's root filesystem.

No registry is reachable and no container can be started here (no cgroup controllers, no raising
of rlimits), but podman can build. So the base image is made locally, Debian bookworm from the
machine's own apt mirror with mmdebstrap, plus the machine's CA bundle (pip reaches the package
index through it), and passed as the Dockerfile's PYTHON_IMAGE. A process of the image then runs
the way a container runtime would start it: in a mount namespace of its own (the mounts go away
with it), on the image's read-only root filesystem with a fresh /tmp, /dev/shm and /proc, and
/data (the compose volume) bound to a folder of the test, as the image's user, in its working
directory, with the image's environment and nothing of ours. It shares the machine's network, so
it reaches PostgreSQL, Redis and the fake Kubernetes API on 127.0.0.1.

The image is built for the machine's architecture unless another is asked for (arm64 on amd64 and
the other way round: tests/ops/image_multiarch.py). A foreign root filesystem runs, in the build and
under chroot, through QEMU's user-mode emulation registered with binfmt_misc.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

BASE_PACKAGES = ("python3", "python3-venv", "python-is-python3", "ca-certificates")
SUITE = "bookworm"
CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
TOOLS = ("podman", "mmdebstrap", "unshare", "chroot", "mount")
# Debian's (and OCI's) architecture names, by the kernel's (`uname -m`); QEMU's in binfmt_misc.
ARCHITECTURES = {"x86_64": "amd64", "aarch64": "arm64"}
QEMU_NAMES = {"amd64": "x86_64", "arm64": "aarch64"}
BINFMT_MISC = Path("/proc/sys/fs/binfmt_misc")


def host_arch() -> str:
    return ARCHITECTURES[platform.machine()]


def missing_emulation(arch: str) -> str | None:
    """Why a root filesystem of `arch` cannot run here (with the commands that fix it), or None."""
    if arch == host_arch():
        return None
    if not (BINFMT_MISC / "status").exists():
        return f"binfmt_misc is not mounted: mount -t binfmt_misc binfmt_misc {BINFMT_MISC}"
    handler = BINFMT_MISC / f"qemu-{QEMU_NAMES[arch]}"
    if not handler.exists() or handler.read_text().splitlines()[:1] != ["enabled"]:
        return f"no enabled binfmt handler {handler}: apt-get install qemu-user-static binfmt-support"
    return None


def missing_tools() -> str | None:
    """The packages missing to build and run the image (make test installs them), or None."""
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    return f"{', '.join(missing)} not installed: apt-get install podman mmdebstrap (.ci/test-deps)" if missing else None


def missing_prerequisites() -> str | None:
    """Why the image cannot be built and run here (not a package: root, the CA bundle), or None."""
    if os.geteuid() != 0:
        return "building with mmdebstrap and running the image's root filesystem with chroot needs root"
    if not CA_BUNDLE.exists():
        return f"no CA bundle at {CA_BUNDLE}: pip inside the build could not reach the package index"
    return None


def apt_mirror() -> str:
    """The machine's Debian mirror (the first URI of its apt sources), else deb.debian.org."""
    sources = sorted(Path("/etc/apt/sources.list.d").glob("*.sources"))
    for text in (path.read_text() for path in sources):
        if match := re.search(r"^URIs:\s*(\S+)", text, re.MULTILINE):
            return match[1]
    listing = Path("/etc/apt/sources.list")
    if listing.exists() and (match := re.search(r"^deb\s+(?:\[[^]]*\]\s+)?(\S+)", listing.read_text(), re.MULTILINE)):
        return match[1]
    return "http://deb.debian.org/debian"


def run(argv: Sequence[str], *, timeout: float, cwd: Path | None = None) -> str:
    """Run a build step; its output in the AssertionError when it fails."""
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False)
    if result.returncode != 0:
        raise AssertionError(f"{shlex.join(argv)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


@dataclass
class Timings:
    """Seconds per step, in order; `summary()` is what the test prints."""

    steps: dict[str, float] = field(default_factory=dict)
    label: str = "image test"
    echo: bool = False  # print each step as it ends: a long run shows its progress

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.steps[name] = time.monotonic() - started
            if self.echo:
                print(f"{self.label}: {name} {self.steps[name]:.1f} s", flush=True)

    def summary(self) -> str:
        parts = [f"{name} {seconds:.1f} s" for name, seconds in self.steps.items()]
        return f"{self.label}: {', '.join(parts)}; total {sum(self.steps.values()):.1f} s"


@dataclass(frozen=True)
class Image:
    tag: str
    root: Path
    env: dict[str, str]
    user: str
    workdir: str


def mmdebstrap_argv(arch: str, tarball: Path) -> list[str]:
    packages = ",".join(BASE_PACKAGES)
    return [
        "mmdebstrap",
        "--variant=minbase",
        f"--arch={arch}",
        f"--include={packages}",
        SUITE,
        str(tarball),
        apt_mirror(),
    ]


def podman_build_argv(arch: str) -> list[str]:
    """`podman build` for `arch`, its steps run with chroot and the machine's network."""
    return ["podman", "build", "--platform", f"linux/{arch}", "--isolation", "chroot", "--network", "host"]


@contextlib.contextmanager
def built_image(
    context: Path,
    scratch: Path,
    timings: Timings,
    *,
    arch: str | None = None,
    keep_as: str | None = None,
    build_timeout: float = 900,
) -> Iterator[Image]:
    """The Dockerfile's image for `arch` (the machine's by default) built on a fresh mmdebstrap
    base, mounted; removed afterwards with the base images (tags of this run only: other runs may
    share podman's storage), unless it is to be kept under the tag `keep_as`."""
    arch = arch or host_arch()
    run_id = uuid.uuid4().hex[:10]
    base, python, app = (f"localhost/ome-compat-test-{part}:{run_id}" for part in ("base", "python", "app"))
    app = keep_as or app
    tags: list[str] = []
    try:
        with timings.step("mmdebstrap"):
            tarball = scratch / "base.tar"
            run(mmdebstrap_argv(arch, tarball), timeout=build_timeout)
        with timings.step("podman import"):
            run(["podman", "import", "--quiet", "--arch", arch, str(tarball), base], timeout=300)
            tags.append(base)
            tarball.unlink()
            shutil.copy(CA_BUNDLE, scratch / "ca-certificates.crt")
            (scratch / "Containerfile").write_text(f"FROM {base}\nCOPY ca-certificates.crt {CA_BUNDLE}\n")
            run([*podman_build_argv(arch), "--quiet", "-t", python, str(scratch)], timeout=300)
            tags.append(python)
        with timings.step("podman build"):
            build = [*podman_build_argv(arch), "--layers=false", "--build-arg", f"PYTHON_IMAGE={python}"]
            run([*build, "-t", app, str(context)], timeout=build_timeout)
            if not keep_as:
                tags.append(app)
        config = json.loads(run(["podman", "image", "inspect", app], timeout=60))[0]["Config"]
        root = Path(run(["podman", "image", "mount", app], timeout=60).strip())
        try:
            env = dict(item.split("=", 1) for item in config.get("Env", []))
            yield Image(tag=app, root=root, env=env, user=config["User"], workdir=config["WorkingDir"])
        finally:
            run(["podman", "image", "unmount", app], timeout=60)
    finally:
        if tags:
            subprocess.run(["podman", "image", "rm", "--force", *reversed(tags)], capture_output=True, timeout=120)


def chroot_argv(image: Image, command: Sequence[str], env: Mapping[str, str], data: Path) -> list[str]:
    """The argv that runs `command` as the image would: see the module's docstring. Every step
    execs the next, so the returned process is the command itself (signals reach it)."""
    root = shlex.quote(str(image.root))
    mounts = " && ".join(
        [
            f"mount -t tmpfs -o mode=1777 tmpfs {root}/tmp",
            f"mount -t tmpfs -o mode=1777 tmpfs {root}/dev/shm",
            f"mount -t proc proc {root}/proc",
            f"mount --bind {shlex.quote(str(data))} {root}/data",
        ]
    )
    environment = [f"{key}={value}" for key, value in {**image.env, **env}.items()]
    inside = f"cd {shlex.quote(image.workdir)} && exec {shlex.join(command)}"
    chroot = ["chroot", f"--userspec={image.user}", str(image.root), "/usr/bin/env", "-i", *environment]
    script = f"{mounts} && exec {shlex.join([*chroot, 'sh', '-c', inside])}"
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", script]


def process_uid(pid: int) -> int:
    """The real uid of a running process."""
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"^Uid:\s+(\d+)", status, re.MULTILINE)
    assert match is not None, status
    return int(match[1])
