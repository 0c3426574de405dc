"""The grid's texts are kept in bounded memos: a grid over any number of pairs holds at most
`Grid.text_memo_entries` reasons and checks, and still answers exactly as check and select do."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import matching
from matching.memo import Memo
from matching.parse import parse_model, parse_runtime

from .strategies import model, model_specs, runtimes


def test_a_memo_keeps_the_most_recently_used_entries_up_to_its_limit() -> None:
    made: list[str] = []
    memo: Memo[str, str] = Memo(2)

    def get(key: str) -> str:
        return memo.get(key, lambda: made.append(key) or key.upper())

    assert [get("a"), get("b"), get("a"), get("c")] == ["A", "B", "A", "C"]  # "c" pushes out "b", not "a"
    assert len(memo) == 2
    assert [get("a"), get("b")] == ["A", "B"]
    assert made == ["a", "b", "c", "b"]


def test_a_memo_refuses_a_limit_below_one() -> None:
    with pytest.raises(ValueError, match="at least one entry"):
        Memo(0)


@settings(max_examples=30, deadline=None)
@given(st.lists(model_specs(), min_size=2, max_size=4), st.lists(runtimes(), min_size=2, max_size=4))
def test_a_grid_with_a_tiny_memo_holds_two_texts_and_answers_as_check_and_select(
    specs: list[dict[str, Any]], runtime_objs: list[dict[str, Any]]
) -> None:
    models = [model(spec, name=f"m{index}") for index, spec in enumerate(specs)]
    runtime_objs = [
        {**obj, "metadata": {**obj["metadata"], "name": f"rt{index}"}} for index, obj in enumerate(runtime_objs)
    ]
    default = matching.Grid.text_memo_entries
    matching.Grid.text_memo_entries = 2
    try:
        result = matching.grid(models, runtime_objs)
    finally:
        matching.Grid.text_memo_entries = default

    for _round in range(2):  # the second round asks again for texts the memo let go
        for model_obj in models:
            parsed = parse_model(model_obj)
            for runtime_obj in runtime_objs:
                key = parse_runtime(runtime_obj).key
                assert result.check(parsed.key, key) == matching.check(model_obj, runtime_obj)
                report = matching.check(model_obj, runtime_obj)
                assert (result.reason(parsed.key, key) is None) == report.compatible
            expected = matching.select(model_obj, runtime_objs).to_dict()
            assert result.select(parsed.key).to_dict() == expected
    assert len(result._reasons) <= 2
    assert len(result._checks) <= 2
