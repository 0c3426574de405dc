"""Model sizes as OME reads them: `7B`, `1.5T`, `500M`, parsed with Go's float syntax.

A size string loses at most one case-sensitive suffix (T, B or M) and the rest must be what
Go's `strconv.ParseFloat(s, 64)` accepts; anything else makes the whole size 0 (spec 2.7).
Runtime size ranges are inclusive, and a missing bound is an open end (spec 10.1, U1).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

__all__ = [
    "SizeRange",
    "format_param_count",
    "go_parse_float",
    "parse_size",
    "size_outside_reason",
]

_SUFFIXES = (("T", 1e12), ("B", 1e9), ("M", 1e6))
_COUNT_UNITS = ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K"))

# Go spells these in any case; only the infinities may carry a sign ("+NaN" is a syntax error).
_SPECIALS = {
    "inf": math.inf,
    "+inf": math.inf,
    "-inf": -math.inf,
    "infinity": math.inf,
    "+infinity": math.inf,
    "-infinity": -math.inf,
    "nan": math.nan,
}

# Underscores may sit anywhere in these patterns; _underscores_ok applies Go's placement rule.
# A hex mantissa needs a `p` exponent; a decimal exponent must start with a digit.
_DECIMAL = re.compile(r"[+-]?(?P<mantissa>[0-9_]*(?:\.[0-9_]*)?)(?:[eE][+-]?[0-9][0-9_]*)?")
_HEX = re.compile(r"[+-]?0[xX](?P<mantissa>[0-9a-fA-F_]*(?:\.[0-9a-fA-F_]*)?)[pP][+-]?[0-9][0-9_]*")
_EXPONENT = re.compile(r"(?P<head>.*[eEpP][+-]?)(?P<digits>[0-9]+)")
_GO_EXPONENT_CAP = 10_000
_DECIMAL_DIGITS = frozenset("0123456789")
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")


def _underscores_ok(text: str, *, is_hex: bool) -> bool:
    """Go's rule: each `_` sits between two digits, or between the `0x` prefix and a digit."""
    body = text.lstrip("+-")
    digits = _HEX_DIGITS if is_hex else _DECIMAL_DIGITS
    previous = "digit" if is_hex else "start"
    for char in body[2:] if is_hex else body:
        if char in digits:
            previous = "digit"
        elif char == "_":
            if previous != "digit":
                return False
            previous = "_"
        elif previous == "_":
            return False
        else:
            previous = "other"
    return previous != "_"


def _go_exponent(text: str) -> str:
    """`text` with its exponent read as Go reads it: digits stop counting once it reaches 10000.

    This only changes a value when the mantissa has thousands of digits to compensate.
    """
    match = _EXPONENT.fullmatch(text)
    if match is None:
        return text
    value = 0
    for char in match["digits"]:
        if value < _GO_EXPONENT_CAP:
            value = value * 10 + (ord(char) - ord("0"))
    return f"{match['head']}{value}"


def _syntax_ok(text: str) -> tuple[bool, bool]:
    """(well formed, is hex) under Go's float literal syntax, for text that is not special."""
    for pattern, digits, is_hex in ((_HEX, _HEX_DIGITS, True), (_DECIMAL, _DECIMAL_DIGITS, False)):
        match = pattern.fullmatch(text)
        if match is not None:
            has_digit = not digits.isdisjoint(match["mantissa"])
            return has_digit and ("_" not in text or _underscores_ok(text, is_hex=is_hex)), is_hex
    return False, False


def go_parse_float(text: str) -> float | None:
    """The value Go's `strconv.ParseFloat(text, 64)` returns, or None where Go reports an error.

    Accepted: an optional sign, ASCII decimal digits with an optional fraction and exponent
    (`.5`, `1.`, `1e3`), `_` only between digits, `inf`/`infinity` (optionally signed) and
    `nan` in any case, and hex floats with a mandatory `p` exponent (`0x1p3`). Rejected:
    whitespace, non-ASCII digits, and finite literals too large for a float64 (Go's range
    error); too small ones become 0 as in Go. Values are correctly rounded, as Go's are.

    One divergence is left on purpose: with more than 800 significant digits before the
    decimal point, Go's slow path can misplace the point (`"1" + "0" * 1000 + "e-500"` gives
    1e299 in Go, and None here since the true value overflows).

    >>> go_parse_float("1_000"), go_parse_float("0x1p3"), go_parse_float(" 7")
    (1000.0, 8.0, None)
    """
    if not text.isascii():
        return None
    special = _SPECIALS.get(text.lower())
    if special is not None:
        return special
    well_formed, is_hex = _syntax_ok(text)
    if not well_formed:
        return None
    digits = _go_exponent(text.replace("_", ""))
    if is_hex:
        try:
            return float.fromhex(digits)
        except OverflowError:
            return None
    value = float(digits)
    return None if math.isinf(value) else value


def parse_size(text: str) -> float:
    """A model size as OME's `parseModelSize` reads it: 0.0 whenever the number does not parse.

    One trailing `T`, `B` or `M` (case-sensitive) multiplies by 1e12, 1e9 or 1e6.

    >>> parse_size("7B"), parse_size("1.5T"), parse_size("7b"), parse_size("7K")
    (7000000000.0, 1500000000000.0, 0.0, 0.0)
    """
    number, multiplier = text, 1.0
    for suffix, factor in _SUFFIXES:
        if text.endswith(suffix):
            number, multiplier = text[: -len(suffix)], factor
            break
    value = go_parse_float(number)
    return 0.0 if value is None else value * multiplier


def _parsed(text: str | None) -> float | None:
    return None if text is None else parse_size(text)


@dataclass(frozen=True, slots=True)
class SizeRange:
    """A runtime's `modelSizeRange`: the bounds as written, and their parsed values.

    None means the bound is absent (an open end). A bound that is present but does not parse
    is 0, as in OME. Equality and hashing use the texts only.
    """

    min_text: str | None = None
    max_text: str | None = None
    min_value: float | None = field(init=False, repr=False, compare=False)
    max_value: float | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_value", _parsed(self.min_text))
        object.__setattr__(self, "max_value", _parsed(self.max_text))

    def contains(self, size: float) -> bool:
        """Whether `size` is inside the inclusive range (NaN on either side passes, as in Go).

        >>> SizeRange(min_text="1B").contains(parse_size("7B"))
        True
        """
        if self.min_value is not None and size < self.min_value:
            return False
        return not (self.max_value is not None and size > self.max_value)

    def size_score(self, size: float) -> float:
        """The tie-break score: the sum of |bound - size| over the bounds that are set.

        >>> SizeRange(min_text="1B", max_text="13B").size_score(7e9)
        12000000000.0
        """
        return sum((abs(bound - size) for bound in (self.min_value, self.max_value) if bound is not None), 0.0)

    def describe(self) -> str:
        """The range as OME prints it: `[1B, 13B]`, `[1B, inf)`, `(-inf, 13B]` or `(-inf, inf)`."""
        low = "(-inf" if self.min_text is None else f"[{self.min_text}"
        high = "inf)" if self.max_text is None else f"{self.max_text}]"
        return f"{low}, {high}"

    def to_dict(self) -> dict[str, str]:
        """The manifest shape: `min` and `max` for the bounds that are set."""
        bounds = {"min": self.min_text, "max": self.max_text}
        return {key: value for key, value in bounds.items() if value is not None}


def size_outside_reason(size_text: str, rng: SizeRange) -> str:
    """OME's reason for a model whose size is outside a runtime's range, with raw strings.

    >>> size_outside_reason("8B", SizeRange(min_text="10B", max_text="70B"))
    'model size 8B is outside supported range [10B, 70B]'
    >>> size_outside_reason("70B", SizeRange(max_text="13B"))
    'model size 70B is outside supported range (-inf, 13B]'
    """
    return f"model size {size_text} is outside supported range {rng.describe()}"


def _scaled(value: float, suffix: str) -> str:
    if value == float(int(value)):
        return f"{int(value)}{suffix}"
    # OME tests value * 100 for wholeness but then prints one decimal, so 7.24 prints as 7.2.
    if value * 100 == float(int(value * 100)):
        return f"{value:.1f}{suffix}"
    return f"{value:.2f}{suffix}"


def format_param_count(count: float) -> str:
    """A parameter count as OME's model agent writes it (`FormatParamCount`, spec 6.4).

    T, B, M or K by magnitude; no decimals for a whole value, one when value * 100 is whole,
    else two. Below 1000 the plain integer. A float count is truncated toward zero first, like
    Go's int64 conversion; NaN and infinities raise ValueError.

    >>> format_param_count(7241732096), format_param_count(1500), format_param_count(999)
    ('7.24B', '1.5K', '999')
    """
    if isinstance(count, float) and not math.isfinite(count):
        raise ValueError(f"parameter count must be finite, not {count!r}")
    whole = int(count)
    for threshold, suffix in _COUNT_UNITS:
        if whole >= threshold:
            return _scaled(float(whole) / float(threshold), suffix)
    return str(whole)
