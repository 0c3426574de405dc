"""matching/ is a pure library: standard library only, typed. Two files of its command line are the
exceptions, each for one package: the file reader takes PyYAML, and `ome-compat mcp` takes the MCP
SDK (the optional extra `ome-compat[mcp]`), imported only when that command runs."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "matching"
ALLOWED_THIRD_PARTY = {"files.py": {"yaml"}, "cli_mcp.py": {"mcp"}, "mcp_tools.py": {"mcp"}}


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_matching_imports_only_the_standard_library(path: Path) -> None:
    outside = _imported_roots(path) - set(sys.stdlib_module_names) - {"__future__"}

    assert outside <= ALLOWED_THIRD_PARTY.get(path.name, set())


def test_matching_passes_mypy_strict() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(PACKAGE)],
        capture_output=True,
        text=True,
        cwd=PACKAGE.parent,
    )

    assert result.returncode == 0, result.stdout + result.stderr
