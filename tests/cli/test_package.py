"""The `ome-compat` distribution from a fresh machine's point of view: the wheel holds the pure
library only, installs into a clean virtual environment (no Django there) and with pipx, and its
command runs `explain` on the seed case and `diff --fail-on lost-runtime` on two manifest trees."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import matching
from tests.support.manifest_trees import HEAD_FILE, ROOT, SEED_MODEL, SEED_RUNTIME, write_trees

pytestmark = pytest.mark.slow


def uv() -> str:
    found = shutil.which("uv", path=f"{ROOT / '.tools/bin'}{os.pathsep}{os.environ.get('PATH', '')}")
    assert found, "uv is missing: `make venv` installs it into .tools/"
    return found


def run(*argv: str | Path, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(arg) for arg in argv], capture_output=True, text=True, cwd=cwd, env=env, timeout=300, check=False
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = run(uv(), "build", "--wheel", "--out-dir", out, ROOT)
    assert built.returncode == 0, built.stderr
    (found,) = out.glob("ome_compat-*.whl")
    return found


@pytest.fixture(scope="module")
def clean_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("venv")
    created = run(
        uv(), "venv", "--quiet", "--python", sys.executable, venv, env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"}
    )
    assert created.returncode == 0, created.stderr
    installed = run(uv(), "pip", "install", "--quiet", "--python", venv / "bin/python", wheel)
    assert installed.returncode == 0, installed.stderr
    return venv


def test_the_wheel_holds_the_typed_library_its_command_and_metadata(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata = next(name for name in names if name.endswith(".dist-info/METADATA"))
        entry_points = next(name for name in names if name.endswith(".dist-info/entry_points.txt"))
        meta, scripts = archive.read(metadata).decode(), archive.read(entry_points).decode()

    assert {name.split("/")[0] for name in names} == {"matching", wheel.name.split("-py3")[0] + ".dist-info"}
    assert "matching/py.typed" in names
    assert f"Version: {matching.__version__}\n" in meta
    assert "License-Expression: Apache-2.0\n" in meta
    # PyYAML only; the MCP SDK only for the `mcp` extra (`ome-compat mcp`, docs/mcp.md).
    assert [line for line in meta.splitlines() if line.startswith("Requires-Dist:")] == [
        "Requires-Dist: pyyaml>=6",
        "Requires-Dist: mcp>=2.3; extra == 'mcp'",
    ]
    assert "ome-compat = matching.cli:main" in scripts


def test_the_command_runs_in_a_clean_environment_without_django(clean_venv: Path, tmp_path: Path) -> None:
    ome_compat = clean_venv / "bin/ome-compat"
    django = run(clean_venv / "bin/python", "-c", "import django")
    version = run(ome_compat, "--version")
    explained = run(ome_compat, "explain", SEED_MODEL, SEED_RUNTIME, ROOT / "catalog/runtimes/srt/Qwen", cwd=tmp_path)

    assert django.returncode == 1
    assert "No module named 'django'" in django.stderr
    assert version.stdout == f"ome-compat {matching.__version__}\n"
    assert explained.returncode == 0, explained.stderr
    assert "Selected: srt-qwen-image" in explained.stdout.splitlines()
    assert "diffusion pipeline required by runtime but not specified in model" in explained.stdout
    _diff_finds_the_lost_runtime_at_its_line(ome_compat, tmp_path)


def test_pipx_installs_the_checkout_and_its_command_diffs_two_trees(tmp_path: Path) -> None:
    home = tmp_path / "pipx"
    env = {
        **os.environ,
        "PIPX_HOME": str(home),
        "PIPX_BIN_DIR": str(home / "bin"),
        "PIPX_MAN_DIR": str(home / "man"),
        "PIPX_DEFAULT_PYTHON": sys.executable,
    }
    installed = run(sys.executable, "-m", "pipx", "install", ROOT, env=env)

    assert installed.returncode == 0, installed.stdout + installed.stderr
    _diff_finds_the_lost_runtime_at_its_line(home / "bin/ome-compat", tmp_path)


def _diff_finds_the_lost_runtime_at_its_line(ome_compat: Path, folder: Path) -> None:
    base, head, line = write_trees(folder / "trees")

    result = run(ome_compat, "diff", base.name, head.name, "--fail-on", "lost-runtime", cwd=folder / "trees")

    assert result.returncode == 1, result.stderr
    assert f"  head/{HEAD_FILE}:{line}: ClusterBaseModel qwen-image-pvc in cluster scope: " in result.stdout
    assert result.stdout.endswith("FAILED: lost-runtime (1)\n")
