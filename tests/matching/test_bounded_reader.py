"""The one bounded reader of untrusted text (matching.load_text): bytes capped, YAML anchors and
aliases refused, documents and values counted before anything is built. The audit's inputs
(issue 32): a 540-byte policy of nested aliases (30 s and 1.76 GB of a web worker), 20,000 small
policies (2.9 MB), a 600-byte manifest (5 s and 400 MB in `ome-compat diff` and the Action):
each is refused fast, with a clear error naming the file or document."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

import matching
from matching.policy import PolicyError, policies_from_text

ROOT = Path(__file__).resolve().parents[2]
FAST = 1.0  # seconds: each refusal is a scan of a few bytes to a few megabytes, nothing built


def alias_bomb(levels: int, prefix: str = "") -> str:
    """`levels` lists of nine aliases of the list before: 9**levels strings once expanded."""
    lines = [f'{prefix}l0: &l0 ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"{prefix}l{n}: &l{n} [{','.join([f'*l{n - 1}'] * 9)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


def policy_bomb() -> str:
    text = "apiVersion: policies.ome-compat.io/v1alpha1\nkind: RuntimePolicy\nmetadata: {name: p}\nspec:\n"
    return text + alias_bomb(9, prefix="  ")


def manifest_bomb() -> str:
    head = "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: r}\nspec:\n"
    return head + alias_bomb(9, prefix="  ")


def many_policies(count: int = 20_000) -> str:
    one = (
        "apiVersion: policies.ome-compat.io/v1alpha1\nkind: RuntimePolicy\nmetadata: {{name: p{n}}}\n"
        "spec: {{assertions: [{{name: a, assert: servedBy, runtime: r}}]}}\n"
    )
    return "---\n".join(one.format(n=n) for n in range(count))


def timed_refusal(call: object) -> tuple[Exception, float]:
    started = time.monotonic()
    with pytest.raises((PolicyError, ValueError)) as refused:
        call()  # type: ignore[operator]
    return refused.value, time.monotonic() - started


def test_the_audits_inputs_have_the_audits_sizes() -> None:
    assert 500 <= len(policy_bomb().encode()) <= 600
    assert 500 <= len(manifest_bomb().encode()) <= 650
    assert 2_500_000 <= len(many_policies().encode()) <= 4_000_000


def test_the_540_byte_alias_bomb_policy_is_refused_fast_naming_the_line() -> None:
    error, took = timed_refusal(lambda: policies_from_text(policy_bomb(), source="policies.yaml"))

    assert took < FAST
    assert isinstance(error, PolicyError)
    assert error.problems == [
        "policies.yaml: invalid YAML at line 5, column 7: YAML aliases are not accepted (nor anchors)"
    ]


def test_20000_small_policies_are_refused_fast_by_size_and_fewer_by_count() -> None:
    error, took = timed_refusal(lambda: policies_from_text(many_policies(), source="policies.yaml"))
    fewer, took_fewer = timed_refusal(lambda: policies_from_text(many_policies(501), source="policies.yaml"))

    assert max(took, took_fewer) < FAST
    assert isinstance(error, PolicyError)
    assert error.problems == ["policies.yaml: the text is larger than 1048576 bytes"]
    assert isinstance(fewer, PolicyError)
    assert fewer.problems == ["policies.yaml: the text has more than 500 documents"]


def test_the_600_byte_manifest_is_refused_fast_in_the_command_line(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    base.mkdir()
    head.mkdir()
    (head / "bomb.yaml").write_text(manifest_bomb())

    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "matching", "diff", str(base), str(head)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    took = time.monotonic() - started

    assert run.returncode == 2, run.stdout + run.stderr
    assert "bomb.yaml" in run.stderr
    assert "YAML aliases are not accepted (nor anchors)" in run.stderr
    assert took < 10  # an interpreter's start included; before: 5 s and 400 MB


@pytest.mark.parametrize(
    ("text", "limits", "message"),
    [
        ("a: " + "x" * 200, matching.TextLimits(max_bytes=100), "the text is larger than 100 bytes"),
        ("a: é" * 30, matching.TextLimits(max_bytes=100), "the text is larger than 100 bytes"),  # bytes, not chars
        ("a: 1\n---\nb: 2\n---\nc: 3\n", matching.TextLimits(max_documents=2), "the text has more than 2 documents"),
        ("a: [1, 2, 3, 4]\n", matching.TextLimits(max_nodes=4), "the text has more than 4 values"),
        ("a: &x 1\n", matching.TextLimits(), "line 1, column 4: YAML aliases are not accepted (nor anchors)"),
    ],
)
def test_each_limit_is_named(text: str, limits: matching.TextLimits, message: str) -> None:
    with pytest.raises(matching.TextRefused) as refused:
        matching.load_text(text, limits=limits)

    assert message in str(refused.value)


def test_a_json_text_counts_its_values_too() -> None:
    with pytest.raises(matching.TextRefused, match="more than 3 values"):
        matching.load_text('{"a": [1, 2, 3]}', json_text=True, limits=matching.TextLimits(max_nodes=3))


def test_a_file_over_the_limit_is_not_read_and_is_named(tmp_path: Path) -> None:
    (tmp_path / "big.yaml").write_text("a: " + "x" * 200)

    (document,) = matching.read_documents([tmp_path], matching.TextLimits(max_bytes=100))

    assert document.path.endswith("big.yaml")
    assert document.error == "the file is larger than 100 bytes"


def test_text_within_the_limits_reads_as_before() -> None:
    ((value, positions),) = matching.load_text("kind: BaseModel\nmetadata: {name: m}\n")

    assert value == {"kind": "BaseModel", "metadata": {"name": "m"}}
    assert positions.line_of(("metadata", "name")) == 2
