"""OME's version parsing, ordering and matching (spec section 3), row by row."""

from __future__ import annotations

import functools
import itertools
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matching.versions import (
    KNOWN_OPERATORS,
    InvalidVersion,
    Version,
    compare_versions,
    operator_problem,
    parse_version,
    version_matches,
    version_problem,
)

# Spec 3.4, all 43 rows: (runtime version, operator or None where the table has a dash, model version, match).
MATCH_TABLE = [
    ("1.0.0", None, "1.0.0", True),
    ("1.0.0", None, "1.0.1", False),
    ("1", None, "1.0.0", True),
    ("1.0", "Equal", "1.0.0", True),
    ("v1.0.0", None, "1.0.0", True),
    ("v1.0", "Equal", "1.0.0", True),
    ("v2.0.0", None, "v2.0.0", True),
    ("1.8.0", "GreaterThan", "1.7.0", True),
    ("1.7.0", "GreaterThan", "1.8.0", False),
    ("1.8.0", "GreaterThan", "1.8.0", False),
    ("1.8.0", "GreaterThanOrEqual", "1.8.0", True),
    ("1.9.0", "GreaterThanOrEqual", "1.8.0", True),
    ("4.51.0", "GreaterThanOrEqual", "4.43.1", True),
    ("4.43.1", "GreaterThanOrEqual", "4.51.0", False),
    ("1.10.0", "GreaterThan", "1.9.0", True),
    ("2.0", "GreaterThan", "1.0.0", False),
    ("1.0", "GreaterThan", "1.0.0", False),
    ("2.0", "GreaterThan", "1.0", True),
    ("2", "GreaterThan", "1", True),
    ("v2", "GreaterThan", "v1", True),
    ("v2.0.0", "GreaterThanOrEqual", "1.0.0", False),
    ("1.0.0", "GreaterThan", "v0.9.0", False),
    ("0.34.0.dev0", None, "0.34.0.dev0", True),
    ("0.34.0.dev0", "GreaterThanOrEqual", "0.34.0.dev0", True),
    ("0.35.0", "GreaterThanOrEqual", "0.34.0.dev0", False),
    ("0.34.0.dev0", None, "0.34.0", False),
    ("4.51.0.dev0", "GreaterThanOrEqual", "4.51.0", False),
    ("4.51.0", "GreaterThanOrEqual", "4.50.0.dev0", False),
    ("1.8.0-dev", "GreaterThan", "1.8.0-dev", True),
    ("1.8.0-dev", "GreaterThan", "1.8.0-alpha", False),
    ("1.8.0+build1", "GreaterThanOrEqual", "1.8.0", False),
    ("1.0.0-rc.1", None, "1.0.0-rc.1", True),
    ("1.0.0-rc.1", None, "1.0.0-rc.2", False),
    ("1.2.3.4", None, "1.2.3.4", True),
    ("1.2.3.4", "GreaterThan", "1.2.2", False),
    ("V1.0.0", None, "V1.0.0", False),
    ("1.2-rc1", None, "1.2-rc1", False),
    ("01.0.0", None, "01.0.0", False),
    ("1.0.0rc1", None, "1.0.0rc1", False),
    ("", None, "", False),
    ("1.0.0", "Foo", "1.0.0", True),
    ("1.0.0", "Foo", "1.0", False),
    ("2.0.0", "greaterthan", "1.0.0", False),
]


def _row_id(index: int, row: tuple[str, str | None, str, bool]) -> str:
    runtime, operator, model, match = row
    return f"row{index:02d}-{runtime or '<empty>'}-{operator or '(none)'}-{model or '<empty>'}-{match}"


@pytest.mark.parametrize(
    ("runtime", "operator", "model", "expected"),
    MATCH_TABLE,
    ids=[_row_id(index, row) for index, row in enumerate(MATCH_TABLE, start=1)],
)
def test_version_match_follows_the_spec_table(runtime: str, operator: str | None, model: str, expected: bool) -> None:
    assert version_matches(runtime, operator, model) is expected


def test_the_spec_table_has_all_43_rows() -> None:
    assert len(MATCH_TABLE) == 43


# Spec 3.1, verified examples.
PARSE_EXAMPLES = [
    ("0.34.0.dev0", Version(0, 34, 0, dev=("dev0",), precision=3)),
    ("1.2.3.4", Version(1, 2, 3, dev=("4",), precision=3)),
    ("1.8.0-dev", Version(1, 8, 0, pre=("dev",), precision=3)),
    ("1.0.0-rc.1", Version(1, 0, 0, pre=("rc", "1"), precision=3)),
    ("1.8.0+build1", Version(1, 8, 0, build=("build1",), precision=3)),
    ("4.51.3-SAM-HQ-preview", Version(4, 51, 3, pre=("SAM-HQ-preview",), precision=3)),
    ("v1", Version(1, 0, 0, precision=1, prefix="v")),
    ("1.12", Version(1, 12, 0, precision=2)),
    ("v0.8.0", Version(0, 8, 0, precision=3, prefix="v")),
    ("1.2.3.4-rc.x+b.c", Version(1, 2, 3, pre=("rc", "x"), build=("b", "c"), dev=("4",))),
    ("1.0.0+b-1+2", Version(1, 0, 0, build=("b-1+2",))),
    ("0.0.0", Version(0, 0, 0)),
    ("18446744073709551615.0.0", Version(2**64 - 1, 0, 0)),
]


@pytest.mark.parametrize(("text", "expected"), PARSE_EXAMPLES, ids=[text for text, _ in PARSE_EXAMPLES])
def test_parse_version_splits_numbers_and_lists_like_ome(text: str, expected: Version) -> None:
    assert parse_version(text) == expected


@pytest.mark.parametrize(
    ("text", "unofficial"),
    [("1.0.0", False), ("v1", False), ("1.0.0-rc1", True), ("1.0.0+b", True), ("0.34.0.dev0", True)],
)
def test_a_version_with_any_list_is_unofficial(text: str, unofficial: bool) -> None:
    assert parse_version(text).unofficial is unofficial


# Spec 3.1 steps 1, 3, 4 and 5, plus the uint64 limit and non-ASCII digits.
PARSE_ERRORS = [
    "",
    "1.",
    "v",
    "+1",
    " 1",
    "1 ",
    "01",
    "1-rc",
    "1.2-rc1",
    "1.2.3rc1",
    "1.2.3-",
    "1.2.3+",
    "1.2.3.",
    "V1.0.0",
    "vv1",
    "1.01.0",
    "1.0.00",
    "1..0",
    ".1",
    "1.0.-1",
    "1_0.0.0",
    "18446744073709551616",
    "1" * 5000,
    "\u0661.0.0",
    "1.\u0662.0",
    "1.0.0-rc..1",
    "1.0.0+b..c",
    "1.0.0.dev..1",
    "1.0.0\n",
]


@pytest.mark.parametrize("text", PARSE_ERRORS, ids=[repr(text)[:40] for text in PARSE_ERRORS])
def test_parse_version_rejects_what_ome_rejects(text: str) -> None:
    with pytest.raises(InvalidVersion):
        parse_version(text)

    assert version_problem(text) is not None


def test_invalid_version_is_a_value_error_that_quotes_the_text() -> None:
    with pytest.raises(ValueError, match=r'^invalid version "01\.0\.0": ') as caught:
        parse_version("01.0.0")

    assert isinstance(caught.value, InvalidVersion)
    assert caught.value.text == "01.0.0"
    assert caught.value.reason == 'the major number "01" has a leading zero'


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "the version is empty"),
        ("1.", "the minor number is empty"),
        ("01.0.0", 'the major number "01" has a leading zero'),
        (
            "V1.0.0",
            'the major number "V1" has characters other than the ASCII digits 0-9 '
            "(only a lowercase 'v' prefix is allowed)",
        ),
        (
            "1.2-rc1",
            'the minor number "2-rc1" has characters other than the ASCII digits 0-9 '
            "(pre-release and build suffixes need all three numbers, as in 1.2.0-rc1)",
        ),
        ("1.2.3rc1", 'the patch number "3rc1" has characters other than the ASCII digits 0-9'),
        ("18446744073709551616", 'the major number "18446744073709551616" does not fit in an unsigned 64-bit integer'),
        ("1.2.3-", "the pre-release list has an empty element"),
        ("1.2.3+", "the build list has an empty element"),
        ("1.2.3.", "the dev list has an empty element"),
        ("1.0.0", None),
    ],
)
def test_version_problem_explains_the_failure(text: str, problem: str | None) -> None:
    assert version_problem(text) == problem


# Ascending; versions in one group are equal. Lists compare by byte order, shorter prefix first.
ORDERED = [
    ["0.9.0"],
    ["0.34", "0.34.0", "v0.34.0"],
    ["0.34.0.dev0"],
    ["0.34.0.dev1"],
    ["1", "1.0", "1.0.0", "v1", "v1.0", "v1.0.0"],
    ["1.0.0.dev0"],
    ["1.0.0+build"],
    ["1.0.0+build.1"],
    ["1.0.0-RC1"],
    ["1.0.0-rc1"],
    ["1.0.0-rc1+b"],
    ["1.0.0-rc1.1"],
    ["1.0.0-rc10"],
    ["1.0.0-rc2"],
    ["1.0.1"],
    ["1.2.0"],
    ["1.8.0"],
    ["1.8.0-alpha"],
    ["1.8.0-beta"],
    ["1.8.0-dev"],
    ["1.9.0"],
    ["1.10.0"],
    ["2", "2.0", "2.0.0"],
    ["4.43.1"],
    ["4.51.0"],
    ["18446744073709551615"],
]


@pytest.mark.parametrize(
    ("lower", "higher"),
    list(itertools.pairwise(ORDERED)),
    ids=[f"{low[0]}<{high[0]}" for low, high in itertools.pairwise(ORDERED)],
)
def test_adjacent_versions_compare_in_order(lower: list[str], higher: list[str]) -> None:
    for a, b in itertools.product(lower, higher):
        assert compare_versions(parse_version(a), parse_version(b)) == -1
        assert compare_versions(parse_version(b), parse_version(a)) == 1


@pytest.mark.parametrize("group", [group for group in ORDERED if len(group) > 1], ids="=".join)
def test_versions_differing_only_in_precision_or_prefix_are_equal(group: list[str]) -> None:
    for a, b in itertools.product(group, repeat=2):
        assert compare_versions(parse_version(a), parse_version(b)) == 0


def test_every_pair_of_the_ordered_table_compares_by_position() -> None:
    ranked = [(rank, parse_version(text)) for rank, group in enumerate(ORDERED) for text in group]

    for (rank_a, a), (rank_b, b) in itertools.product(ranked, repeat=2):
        expected = (rank_a > rank_b) - (rank_a < rank_b)
        assert compare_versions(a, b) == expected, (str(a), str(b))


def test_sorting_with_compare_versions_reproduces_the_table() -> None:
    texts = [group[0] for group in ORDERED]

    ordered = sorted((parse_version(text) for text in reversed(texts)), key=functools.cmp_to_key(compare_versions))

    assert [str(version) for version in ordered] == texts


def test_release_sorts_below_its_pre_release_unlike_semver() -> None:
    assert compare_versions(parse_version("1.0.0"), parse_version("1.0.0-rc1")) == -1
    assert compare_versions(parse_version("1.8.0-alpha"), parse_version("1.8.0-beta")) == -1


def test_build_metadata_counts_for_equality() -> None:
    assert compare_versions(parse_version("1.8.0+a"), parse_version("1.8.0+b")) == -1
    assert not version_matches("1.8.0+a", "Equal", "1.8.0+b")


@pytest.mark.parametrize("operator", ["GreaterThan", "GreaterThanOrEqual", "Foo", None, "Equal"])
def test_unparsable_version_on_either_side_never_matches(operator: str | None) -> None:
    assert not version_matches("latest", operator, "1.0.0")
    assert not version_matches("1.0.0", operator, "latest")


@pytest.mark.parametrize("operator", ["Equal", "GreaterThan", "GreaterThanOrEqual", "NotEqual", "", None])
def test_unofficial_versions_only_match_themselves_whatever_the_operator(operator: str | None) -> None:
    assert version_matches("1.8.0-rc1", operator, "1.8.0-rc1")
    assert not version_matches("1.9.0-rc1", operator, "1.8.0-rc1")
    assert not version_matches("1.9.0", operator, "1.8.0-rc1")


def test_unofficial_versions_ignore_precision_and_prefix() -> None:
    assert version_matches("v1.0.0-rc1", "Foo", "1.0.0-rc1")


def test_empty_operator_is_an_unknown_operator() -> None:
    assert version_matches("1.0.0", "", "1.0.0")
    assert not version_matches("1.0.0", "", "1.0")
    assert not version_matches("2.0.0", "", "1.0.0")


def test_greater_than_makes_the_runtime_version_an_upper_bound_on_the_model() -> None:
    assert version_matches("4.51.0", "GreaterThanOrEqual", "4.43.1")
    assert not version_matches("4.43.1", "GreaterThanOrEqual", "4.51.0")


@pytest.mark.parametrize("operator", [None, *KNOWN_OPERATORS])
def test_known_operators_raise_no_warning(operator: str | None) -> None:
    assert operator_problem(operator) is None


def test_unknown_operator_warning_says_ome_treats_it_as_equal() -> None:
    problem = operator_problem("NotEqual")

    assert problem is not None
    assert problem.startswith('operator "NotEqual" is not one of Equal, GreaterThan, GreaterThanOrEqual; ')
    assert "OME compares as Equal" in problem
    assert "same number of parts" in problem


@pytest.mark.parametrize(
    ("operator", "suggestion"),
    [("greaterthan", "GreaterThan"), ("equal", "Equal"), ("GREATERTHANOREQUAL", "GreaterThanOrEqual")],
)
def test_operator_warning_suggests_the_right_case(operator: str, suggestion: str) -> None:
    assert f'did you mean "{suggestion}"?' in (operator_problem(operator) or "")


# Property tests ---------------------------------------------------------------------------

_numbers = st.integers(min_value=0, max_value=2**64 - 1).map(str)
_ALPHANUMERIC = string.ascii_letters + string.digits
_identifier = st.text(alphabet=_ALPHANUMERIC, min_size=1, max_size=6)
_pre_identifier = st.text(alphabet=_ALPHANUMERIC + "-", min_size=1, max_size=6)
_lists = st.lists(_identifier, max_size=3)


@st.composite
def version_texts(draw: st.DrawFn) -> str:
    """Canonical version strings: every shape OME parses, written the way str(Version) writes them."""
    prefix = draw(st.sampled_from(["", "v"]))
    precision = draw(st.integers(min_value=1, max_value=3))
    text = prefix + ".".join(draw(st.lists(_numbers, min_size=precision, max_size=precision)))
    if precision == 3:
        dev, pre, build = draw(_lists), draw(st.lists(_pre_identifier, max_size=3)), draw(_lists)
        text += "".join(f"{mark}{'.'.join(items)}" for mark, items in ((".", dev), ("-", pre), ("+", build)) if items)
    return text


# Small versions collide often, so equal and ordered pairs both occur.
_small_versions = st.builds(
    lambda prefix, nums, tail: prefix + ".".join(nums) + (tail if len(nums) == 3 else ""),
    st.sampled_from(["", "v"]),
    st.lists(st.sampled_from(["0", "1", "2"]), min_size=1, max_size=3),
    st.sampled_from(["", "", "", "-rc1", "-rc2", ".dev0", "+b"]),
)
_any_versions = st.one_of(version_texts(), _small_versions)
_operators = st.sampled_from([None, "Equal", "GreaterThan", "GreaterThanOrEqual", "Foo", ""])


@given(st.text())
def test_parse_version_raises_only_invalid_version(text: str) -> None:
    try:
        parse_version(text)
    except InvalidVersion:
        assert version_problem(text) is not None
    else:
        assert version_problem(text) is None


@given(version_texts())
def test_generated_versions_parse_and_print_back_unchanged(text: str) -> None:
    assert str(parse_version(text)) == text


@given(_any_versions, _any_versions)
def test_equal_matching_is_symmetric(a: str, b: str) -> None:
    for operator in (None, "Equal", "Foo"):
        assert version_matches(a, operator, b) == version_matches(b, operator, a)


@given(_any_versions, _any_versions)
def test_compare_versions_is_antisymmetric_and_agrees_with_equal_matching(a: str, b: str) -> None:
    va, vb = parse_version(a), parse_version(b)

    assert compare_versions(va, vb) == -compare_versions(vb, va)
    assert version_matches(a, "Equal", b) == (compare_versions(va, vb) == 0)


@given(_any_versions, _any_versions, _any_versions)
def test_compare_versions_is_transitive(a: str, b: str, c: str) -> None:
    va, vb, vc = parse_version(a), parse_version(b), parse_version(c)

    if compare_versions(va, vb) <= 0 and compare_versions(vb, vc) <= 0:
        assert compare_versions(va, vc) <= 0


@given(_any_versions, _operators, _any_versions)
def test_matching_follows_the_rules_of_spec_3_3(runtime: str, operator: str | None, model: str) -> None:
    r, m = parse_version(runtime), parse_version(model)
    order = compare_versions(r, m)

    result = version_matches(runtime, operator, model)

    if r.unofficial or m.unofficial or operator in (None, "Equal"):
        assert result == (order == 0)
    elif (r.precision, r.prefix) != (m.precision, m.prefix):
        assert result is False
    elif operator == "GreaterThan":
        assert result == (order == 1)
    elif operator == "GreaterThanOrEqual":
        assert result == (order >= 0)
    else:
        assert result == (order == 0)


@given(st.text(), _operators, _any_versions)
def test_unparsable_text_never_matches(text: str, operator: str | None, other: str) -> None:
    if version_problem(text) is not None:
        assert not version_matches(text, operator, other)
        assert not version_matches(other, operator, text)
