"""Upstream proposals as profiles: what flips if upstream merges them. Expectations come from
the pull requests' own descriptions, cited at each test.

ome-projects/ome#603, "[Refactor] Scope-first runtime tie-breaking; deprecate Weight": "runtime
tie-breaking is now `scope → priority → size → name` (strict). Namespace-scoped runtimes
hard-override cluster-scoped runtimes within the namespace, regardless of priority. Within the
same scope, higher priority wins; within the same priority, closer model-size proximity wins;
final fallback is alphabetical name." "Score is now just Priority: CalculateScore returns the
best-matching format's priority; the old `Weight x Priority` math is removed."
"""

from __future__ import annotations

import matching

V13, PR603 = "v1.3", "pr603"


def entry(k, format_weight: int = 1, priority: int = 1) -> dict:
    """The llama entry with explicit weights (the API server's defaults are 1; absent, OME counts 10 and 5)."""
    return k.llama_entry(
        modelFormat=k.ref("safetensors", "1.0.0", weight=format_weight),
        modelFramework=k.ref("transformers", "4.51.0", weight=1),
        priority=priority,
    )


def pick(k, runtimes: list[dict], behaviour: str, namespace: str = "team") -> str | None:
    return matching.select(
        k.llama(modelParameterSize="8B"), runtimes, namespace=namespace, behaviour=behaviour
    ).selected


def test_under_603_the_priority_wins_over_the_weights(k) -> None:
    weighted = k.csr("weighted", entry(k, format_weight=5))  # (5+1)x1
    prioritised = k.csr("prioritised", entry(k, priority=2))  # (1+1)x2

    assert pick(k, [weighted, prioritised], V13) == "weighted"
    assert pick(k, [weighted, prioritised], PR603) == "prioritised"
    assert matching.score(k.llama(), prioritised, behaviour=PR603) == 2
    assert matching.score(k.llama(), weighted, behaviour=PR603) == 1


def test_under_603_a_namespace_runtime_still_wins_regardless_of_priority(k) -> None:
    local = k.sr("local", k.llama_entry(priority=1))
    cluster = k.csr("cluster", k.llama_entry(priority=9))

    assert pick(k, [local, cluster], PR603) == "local"


def test_under_603_equal_priorities_go_to_the_closer_size_range_then_the_name(k) -> None:
    wide = k.csr("a-wide", k.llama_entry(), modelSizeRange={"min": "1B", "max": "70B"})
    narrow = k.csr("z-narrow", k.llama_entry(), modelSizeRange={"min": "7B", "max": "9B"})
    b, c = k.csr("b", k.llama_entry()), k.csr("c", k.llama_entry())

    assert pick(k, [wide, narrow], PR603) == "z-narrow"
    assert pick(k, [c, b], PR603) == "b"


def test_the_score_breakdown_says_the_priority_is_the_score(k) -> None:
    model = matching.parse_model(k.llama())
    runtime = matching.parse_runtime(k.csr("rt", entry(k, priority=3)))

    assert matching.score_breakdown(model, runtime.entries[0], PR603) == (
        "3 (the priority: proposal ome#603 drops the weights)"
    )
    assert matching.score_breakdown(model, runtime.entries[0], V13) == "(1 + 1) x 3 = 6"


def test_the_upgrade_diff_says_what_flips_if_upstream_merges_603(k) -> None:
    weighted = k.csr("weighted", entry(k, format_weight=5))
    prioritised = k.csr("prioritised", entry(k, priority=2))
    grid = matching.grid([k.llama(modelParameterSize="8B")], [weighted, prioritised], behaviour=V13)

    picks = [item for item in matching.behaviour_diff(grid, PR603) if item.field == "pick"]

    assert picks
    assert {(item.before, item.after, item.causes) for item in picks} == {
        (("ClusterServingRuntime", "", "weighted"), ("ClusterServingRuntime", "", "prioritised"), ("P603",))
    }
    assert "proposal ome#603" in picks[0].explanation
