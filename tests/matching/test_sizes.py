"""Model sizes (spec 2.7), half-open size ranges (spec 10.1 U1) and parameter counts (spec 6.4)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matching.sizes import SizeRange, format_param_count, go_parse_float, parse_size, size_outside_reason

INF = math.inf

# Spec 2.7, the verified values and the further verified values.
SIZE_TABLE = [
    ("7B", 7e9),
    ("1.5T", 1.5e12),
    ("500M", 5e8),
    ("0.5B", 5e8),
    ("7.11B", 7.11e9),
    ("7", 7.0),
    ("7b", 0.0),
    ("7K", 0.0),
    ("", 0.0),
    ("B", 0.0),
    (" 7B", 0.0),
    ("7B ", 0.0),
    ("1e9", 1e9),
    ("-1B", -1e9),
    ("1_000", 1000.0),
    ("Inf", INF),
    ("+7B", 7e9),
    (".5B", 5e8),
    ("1.B", 1e9),
    ("1e3M", 1e9),
    ("0x1p3B", 8e9),
    ("-Inf", -INF),
    ("7BB", 0.0),
    ("1e", 0.0),
    ("1__0", 0.0),
    ("_1", 0.0),
    ("1_", 0.0),
    ("\u0661B", 0.0),
]


@pytest.mark.parametrize(("text", "expected"), SIZE_TABLE, ids=[repr(text) for text, _ in SIZE_TABLE])
def test_parse_size_matches_the_verified_values(text: str, expected: float) -> None:
    assert parse_size(text) == expected


def test_nan_size_parses_to_nan() -> None:
    assert math.isnan(parse_size("NaN"))


# Go's strconv.ParseFloat, beyond the spec's table (from Go's float literal grammar).
GO_FLOAT_TABLE = [
    ("0", 0.0),
    ("-0", -0.0),
    ("007", 7.0),
    ("1E3", 1000.0),
    ("1e+3", 1000.0),
    ("1e-3", 0.001),
    ("1_000.000_5", 1000.0005),
    ("1e1_0", 1e10),
    ("infinity", INF),
    ("+INFINITY", INF),
    ("-iNf", -INF),
    ("0x1.8p1", 3.0),
    ("0X1P-2", 0.25),
    ("-0x10p0", -16.0),
    ("0x_1p3", 8.0),
    ("0xa_bp0", 171.0),
    ("0x.8p1", 1.0),
    ("1e-400", 0.0),
    ("1.7976931348623157e308", 1.7976931348623157e308),
    ("+NaN", None),
    ("-nan", None),
    ("nanx", None),
    ("infin", None),
    ("infinityy", None),
    ("1e400", None),
    ("-1e400", None),
    ("0x1p99999", None),
    ("0x1", None),
    ("0x", None),
    ("0xp1", None),
    ("0x1p", None),
    ("0x1_p3", None),
    ("0b101", None),
    ("1e_1", None),
    ("1_e1", None),
    ("1._5", None),
    ("1_.5", None),
    ("1e1_", None),
    ("1e+", None),
    (".", None),
    (".e1", None),
    ("+", None),
    ("1.2.3", None),
    ("++1", None),
    ("1 ", None),
    ("\t1", None),
    ("1\n", None),
    ("\uff11", None),
    ("1\u00a0", None),
]


@pytest.mark.parametrize(("text", "expected"), GO_FLOAT_TABLE, ids=[repr(text) for text, _ in GO_FLOAT_TABLE])
def test_go_parse_float_accepts_go_float_syntax(text: str, expected: float | None) -> None:
    result = go_parse_float(text)

    assert result == expected
    if result is not None and expected is not None:
        assert math.copysign(1.0, result) == math.copysign(1.0, expected)


def test_go_parse_float_reads_nan_in_any_case() -> None:
    for text in ("nan", "NaN", "NAN", "nAn"):
        result = go_parse_float(text)
        assert result is not None
        assert math.isnan(result)


def test_go_stops_reading_exponent_digits_once_the_exponent_reaches_10000() -> None:
    assert go_parse_float("0." + "0" * 20000 + "1e20005") == 10000.0
    assert go_parse_float("0." + "0" * 20000 + "1e100005") == 0.0
    assert go_parse_float("1e00000000000000000001") == 10.0


def test_a_suffix_after_an_overflowing_number_gives_zero_but_suffix_overflow_gives_infinity() -> None:
    assert parse_size("1e400B") == 0.0
    assert parse_size("1e308B") == INF


def test_only_one_suffix_is_removed_and_it_is_case_sensitive() -> None:
    assert parse_size("7MB") == 0.0
    assert parse_size("7t") == 0.0
    assert parse_size("7m") == 0.0
    assert parse_size("2T") == 2e12


# Spec 10.1 U1: missing bounds are open ends; bounds stay inclusive.
CONTAINS_TABLE = [
    (SizeRange(min_text="1B", max_text="13B"), "7B", True),
    (SizeRange(min_text="1B", max_text="13B"), "1B", True),
    (SizeRange(min_text="1B", max_text="13B"), "13B", True),
    (SizeRange(min_text="1B", max_text="13B"), "14B", False),
    (SizeRange(min_text="1B", max_text="13B"), "500M", False),
    (SizeRange(min_text="1B"), "7B", True),
    (SizeRange(min_text="1B"), "1T", True),
    (SizeRange(min_text="1B"), "500M", False),
    (SizeRange(max_text="13B"), "7B", True),
    (SizeRange(max_text="13B"), "-1B", True),
    (SizeRange(max_text="13B"), "70B", False),
    (SizeRange(), "7B", True),
    (SizeRange(), "Inf", True),
    (SizeRange(), "-Inf", True),
    (SizeRange(min_text="10B", max_text="70B"), "8B", False),
    (SizeRange(min_text="10B", max_text="70B"), "0", False),
    (SizeRange(min_text="10B", max_text="70B"), "unknown", False),
    (SizeRange(min_text="10B", max_text="70B"), "NaN", True),
    (SizeRange(min_text="70B", max_text="10B"), "30B", False),
    (SizeRange(min_text="70B", max_text="10B"), "NaN", True),
    (SizeRange(min_text="", max_text="13B"), "-1", False),
    (SizeRange(min_text="NaN", max_text="NaN"), "7B", True),
]


@pytest.mark.parametrize(
    ("rng", "size", "expected"),
    CONTAINS_TABLE,
    ids=[f"{rng.describe()}-{size}" for rng, size, _ in CONTAINS_TABLE],
)
def test_size_range_contains_with_inclusive_and_open_bounds(rng: SizeRange, size: str, expected: bool) -> None:
    assert rng.contains(parse_size(size)) is expected


@pytest.mark.parametrize(
    ("rng", "expected"),
    [
        (SizeRange(min_text="1B"), 6e9),
        (SizeRange(max_text="13B"), 6e9),
        (SizeRange(min_text="1B", max_text="13B"), 12e9),
        (SizeRange(), 0.0),
        (SizeRange(min_text="7B", max_text="9B"), 2e9),
        (SizeRange(min_text="9B", max_text="10B"), 5e9),
    ],
    ids=["min-only", "max-only", "both", "none", "7B-9B", "9B-10B"],
)
def test_size_score_adds_the_distance_to_each_set_bound(rng: SizeRange, expected: float) -> None:
    assert rng.size_score(parse_size("7B")) == expected


def test_spec_ordering_example_scores_the_narrower_closer_range_lower() -> None:
    size = parse_size("8B")

    assert SizeRange(min_text="7B", max_text="9B").size_score(size) == 2e9
    assert SizeRange(min_text="9B", max_text="10B").size_score(size) == 3e9
    assert SizeRange(min_text="1B", max_text="70B").size_score(size) == 69e9


def test_equal_width_ranges_written_with_suffixes_score_exactly_equal() -> None:
    size = parse_size("8B")

    assert SizeRange(min_text="7.11B", max_text="9B").size_score(size) == SizeRange(
        min_text="7B", max_text="8.89B"
    ).size_score(size)


@pytest.mark.parametrize(
    ("rng", "reason"),
    [
        (SizeRange(min_text="10B", max_text="70B"), "model size 8B is outside supported range [10B, 70B]"),
        (SizeRange(min_text="60B", max_text="75B"), "model size 8B is outside supported range [60B, 75B]"),
        (SizeRange(min_text="10B"), "model size 8B is outside supported range [10B, inf)"),
        (SizeRange(max_text="7B"), "model size 8B is outside supported range (-inf, 7B]"),
        (SizeRange(min_text="1e1B", max_text=" 7B"), "model size 8B is outside supported range [1e1B,  7B]"),
    ],
    ids=["both", "catalog", "min-only", "max-only", "raw-strings"],
)
def test_size_outside_reason_prints_the_raw_strings(rng: SizeRange, reason: str) -> None:
    assert size_outside_reason("8B", rng) == reason


def test_describe_without_bounds_is_the_whole_line() -> None:
    assert SizeRange().describe() == "(-inf, inf)"


def test_size_range_keeps_texts_and_parsed_values() -> None:
    rng = SizeRange(min_text="1B", max_text="7b")

    assert (rng.min_text, rng.max_text) == ("1B", "7b")
    assert (rng.min_value, rng.max_value) == (1e9, 0.0)
    assert (SizeRange().min_value, SizeRange().max_value) == (None, None)


def test_size_ranges_compare_and_hash_by_text() -> None:
    assert SizeRange(min_text="NaN") == SizeRange(min_text="NaN")
    assert SizeRange(min_text="1B") != SizeRange(min_text="1000M")
    assert len({SizeRange(max_text="13B"), SizeRange(max_text="13B")}) == 1


def test_size_range_to_dict_keeps_only_present_bounds() -> None:
    assert SizeRange(min_text="1B").to_dict() == {"min": "1B"}
    assert SizeRange(min_text="", max_text="2B").to_dict() == {"min": "", "max": "2B"}
    assert SizeRange().to_dict() == {}


# Spec 6.4, verified, then consequences of its rule: value * 100 whole prints ONE decimal.
PARAM_COUNTS = [
    (0, "0"),
    (999, "999"),
    (1500, "1.5K"),
    (135000000, "135M"),
    (7241732096, "7.24B"),
    (685_000_000_000, "685B"),
    (1_234_000_000_000, "1.23T"),
    (1000, "1K"),
    (7_000_000_000, "7B"),
    (70_553_706_496, "70.55B"),
    (7_240_000_000, "7.2B"),
    (70_550_000_000, "70.5B"),
    (1_250_000, "1.2M"),
]


@pytest.mark.parametrize(("count", "text"), PARAM_COUNTS, ids=[str(count) for count, _ in PARAM_COUNTS])
def test_format_param_count_matches_ome(count: int, text: str) -> None:
    assert format_param_count(count) == text


def test_format_param_count_truncates_float_counts_like_go() -> None:
    assert format_param_count(685e9) == "685B"
    assert format_param_count(999.9) == "999"


@pytest.mark.parametrize("count", [math.nan, math.inf, -math.inf])
def test_format_param_count_rejects_non_finite_counts(count: float) -> None:
    with pytest.raises(ValueError, match="finite"):
        format_param_count(count)


def test_a_k_count_parses_as_zero() -> None:
    assert parse_size(format_param_count(1500)) == 0.0


# Property tests ---------------------------------------------------------------------------

_plain_decimal = st.from_regex(r"[+-]?([0-9]{1,25}\.?[0-9]{0,25}|\.[0-9]{1,25})([eE][+-]?[0-9]{1,4})?", fullmatch=True)
_digits = st.text(alphabet="0123456789", min_size=1, max_size=12)


@given(_plain_decimal)
def test_go_parse_float_agrees_with_float_on_plain_decimals(text: str) -> None:
    expected = float(text)

    result = go_parse_float(text)

    if math.isinf(expected):
        assert result is None
    else:
        assert result is not None
        assert result == expected
        assert math.copysign(1.0, result) == math.copysign(1.0, expected)


@given(st.text())
def test_go_parse_float_never_raises_and_rejects_whitespace(text: str) -> None:
    result = go_parse_float(text)

    if any(char.isspace() for char in text) or not text.isascii():
        assert result is None


@given(_digits, st.data())
def test_single_underscores_between_digits_change_nothing(digits: str, data: st.DataObject) -> None:
    cuts = data.draw(st.sets(st.integers(min_value=1, max_value=max(1, len(digits) - 1))))
    text = "".join(("_" + char) if index in cuts and index < len(digits) else char for index, char in enumerate(digits))

    assert go_parse_float(text) == float(digits)


@given(st.integers(min_value=0, max_value=2**53), st.integers(min_value=-60, max_value=60))
def test_hex_floats_read_like_float_fromhex(mantissa: int, exponent: int) -> None:
    text = f"0x{mantissa:x}p{exponent}"

    assert go_parse_float(text) == float.fromhex(text)


@given(_plain_decimal, st.sampled_from([("T", 1e12), ("B", 1e9), ("M", 1e6), ("", 1.0)]))
def test_parse_size_multiplies_by_the_suffix(number: str, suffix: tuple[str, float]) -> None:
    letter, factor = suffix
    value = float(number)

    expected = 0.0 if math.isinf(value) else value * factor

    assert parse_size(number + letter) == expected


_bound = st.one_of(st.none(), st.sampled_from(["1B", "7B", "13B", "500M", "1.5T", "0", "NaN", "x"]))
_sizes = st.one_of(st.floats(allow_nan=True), st.sampled_from([0.0, 1e9, 7e9, 13e9, 5e8, 1.5e12]))


@given(_bound, _bound, _sizes)
def test_contains_is_the_open_or_closed_interval_check(low: str | None, high: str | None, size: float) -> None:
    rng = SizeRange(min_text=low, max_text=high)
    above_min = rng.min_value is None or not size < rng.min_value
    below_max = rng.max_value is None or not size > rng.max_value

    assert rng.contains(size) == (above_min and below_max)


@given(_bound, _bound, st.floats(allow_nan=False, allow_infinity=False))
def test_size_score_is_the_sum_over_set_bounds(low: str | None, high: str | None, size: float) -> None:
    rng = SizeRange(min_text=low, max_text=high)
    parts = [abs(bound - size) for bound in (rng.min_value, rng.max_value) if bound is not None]

    score = rng.size_score(size)

    if any(math.isnan(part) for part in parts):
        assert math.isnan(score)
    else:
        assert score == sum(parts)
        assert score >= 0


@given(_bound, _bound)
def test_describe_shows_brackets_for_set_bounds_and_parentheses_for_open_ends(
    low: str | None, high: str | None
) -> None:
    text = SizeRange(min_text=low, max_text=high).describe()

    assert text.startswith("(-inf, " if low is None else f"[{low}, ")
    assert text.endswith(", inf)" if high is None else f", {high}]")
