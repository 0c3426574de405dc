"""OME's version strings: parse, compare and match them as `pkg/modelver` and the matcher do.

This is not SemVer. Versions have one to three dot-separated numbers (an optional lowercase
`v` before the first), and only three-part versions may carry a dev list (`.dev0`), a
pre-release list (`-rc.1`) and build metadata (`+build1`). All three lists take part in
equality and ordering, and a version with any of them is "unofficial": the matcher then only
accepts the identical version, whatever the operator (spec section 3).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

__all__ = [
    "KNOWN_OPERATORS",
    "InvalidVersion",
    "Version",
    "compare_versions",
    "operator_problem",
    "parse_version",
    "version_matches",
    "version_problem",
]

KNOWN_OPERATORS = ("Equal", "GreaterThan", "GreaterThanOrEqual")
"""The operators OME acts on; any other string behaves as Equal after the precision check."""

_ASCII_DIGITS = frozenset("0123456789")
_UINT64_MAX = 2**64 - 1
_UINT64_MAX_DIGITS = len(str(_UINT64_MAX))
_CACHE_SIZE = 4096


def _quote(text: str) -> str:
    """Double-quote a value for a message, escaping what needs it (like Go's %q, roughly)."""
    return json.dumps(text, ensure_ascii=False)


class InvalidVersion(ValueError):
    """A version string that OME's parser rejects; `text` is the input, `reason` says why."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        super().__init__(f"invalid version {_quote(text)}: {reason}")


@dataclass(frozen=True, slots=True)
class Version:
    """A parsed version. `==` compares every field; use `compare_versions` for OME's order.

    `precision` is how many of major/minor/patch were written (1 to 3) and `prefix` is "v" when
    the text started with a lowercase v. Neither takes part in OME's comparison.
    """

    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()
    build: tuple[str, ...] = ()
    dev: tuple[str, ...] = ()
    precision: int = 3
    prefix: str = ""

    @property
    def unofficial(self) -> bool:
        """True when the version has a pre-release, build or dev list."""
        return bool(self.pre or self.build or self.dev)

    def __str__(self) -> str:
        numbers = (self.major, self.minor, self.patch)[: self.precision]
        text = self.prefix + ".".join(str(number) for number in numbers)
        if self.dev:
            text += "." + ".".join(self.dev)
        if self.pre:
            text += "-" + ".".join(self.pre)
        if self.build:
            text += "+" + ".".join(self.build)
        return text


def _number_problem(field: str, text: str) -> str | None:
    """Why `text` is not a major/minor/patch number OME accepts, or None."""
    if text == "":
        return f"the {field} number is empty"
    if not _ASCII_DIGITS.issuperset(text):
        return f"the {field} number {_quote(text)} has characters other than the ASCII digits 0-9"
    if len(text) > 1 and text[0] == "0":
        return f"the {field} number {_quote(text)} has a leading zero"
    # The length check keeps int() away from Python's limit on very long digit strings.
    if len(text) > _UINT64_MAX_DIGITS or int(text) > _UINT64_MAX:
        return f"the {field} number {_quote(text)} does not fit in an unsigned 64-bit integer"
    return None


def _split_off(text: str, separator: str) -> tuple[str, tuple[str, ...]]:
    """Split at the first `separator`: the text before it, and the rest split on dots."""
    head, found, tail = text.partition(separator)
    return (head, tuple(tail.split("."))) if found else (text, ())


def _hint(text: str, precision: int) -> str:
    """A suggestion for common mistakes, appended to the reason ("" when none applies)."""
    if text.startswith("V"):
        return " (only a lowercase 'v' prefix is allowed)"
    if precision < 3 and text[0] in _ASCII_DIGITS | {"v"} and ("-" in text or "+" in text):
        return " (pre-release and build suffixes need all three numbers, as in 1.2.0-rc1)"
    return ""


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _parse(text: str) -> Version | str:
    """The parsed version, or the reason it does not parse. Cached: results are immutable."""
    if text == "":
        return "the version is empty"
    parts = text.split(".", 2)
    precision = len(parts)
    prefix = "v" if parts[0].startswith("v") else ""
    rest, build = _split_off(parts[2] if precision > 2 else "0", "+")
    rest, pre = _split_off(rest, "-")
    patch_text, dev = _split_off(rest, ".")
    numbers = (
        ("major", parts[0][len(prefix) :]),
        ("minor", parts[1] if precision > 1 else "0"),
        ("patch", patch_text),
    )
    for field, number_text in numbers:
        problem = _number_problem(field, number_text)
        if problem is not None:
            return problem + _hint(text, precision)
    for label, items in (("pre-release", pre), ("build", build), ("dev", dev)):
        if "" in items:
            return f"the {label} list has an empty element"
    major, minor, patch = (int(number_text) for _, number_text in numbers)
    return Version(major, minor, patch, pre, build, dev, precision, prefix)


def parse_version(text: str) -> Version:
    """Parse `text` exactly as OME's `modelver.Parse` does.

    Raises InvalidVersion (a ValueError) wherever OME's parser fails: an empty string, a
    number that is empty, not plain ASCII digits, zero-padded or above 2**64 - 1, an
    uppercase `V`, or an empty element in the dev, pre-release or build list.

    >>> parse_version("0.34.0.dev0")
    Version(major=0, minor=34, patch=0, pre=(), build=(), dev=('dev0',), precision=3, prefix='')
    >>> parse_version("v1").prefix, parse_version("v1").precision
    ('v', 1)
    >>> parse_version("1.2-rc1")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    InvalidVersion: invalid version "1.2-rc1": the minor number "2-rc1" has characters ...
    """
    result = _parse(text)
    if isinstance(result, str):
        raise InvalidVersion(text, result)
    return result


def version_problem(text: str) -> str | None:
    """Why OME cannot parse `text` as a version (a short sentence for warnings), or None.

    >>> version_problem("01.0.0")
    'the major number "01" has a leading zero'
    >>> version_problem("1.0.0") is None
    True
    """
    result = _parse(text)
    return result if isinstance(result, str) else None


def compare_versions(a: Version, b: Version) -> int:
    """-1, 0 or 1 as `a` is below, equal to or above `b` in OME's order.

    Numbers first, then the pre-release, build and dev lists element by element in byte order
    (a list that is a prefix of the other is smaller). Precision and prefix are ignored, so
    `1` equals `v1.0.0`, and `1.0.0` is below `1.0.0-rc1`.

    >>> compare_versions(parse_version("1.0.0"), parse_version("1.0.0-rc1"))
    -1
    """
    numbers_a, numbers_b = (a.major, a.minor, a.patch), (b.major, b.minor, b.patch)
    if numbers_a != numbers_b:
        return -1 if numbers_a < numbers_b else 1
    # Tuples of str order element-wise with a proper prefix first, and str orders by code
    # point, which is the byte order of the UTF-8 encoding Go compares.
    for list_a, list_b in ((a.pre, b.pre), (a.build, b.build), (a.dev, b.dev)):
        if list_a != list_b:
            return -1 if list_a < list_b else 1
    return 0


@functools.lru_cache(maxsize=_CACHE_SIZE)
def _matches(runtime_version: str, operator: str | None, model_version: str) -> bool:
    model = _parse(model_version)
    runtime = _parse(runtime_version)
    if isinstance(model, str) or isinstance(runtime, str):
        return False
    op = "Equal" if operator is None else operator
    order = compare_versions(runtime, model)
    if model.unofficial or runtime.unofficial or op == "Equal":
        return order == 0
    if runtime.precision != model.precision or runtime.prefix != model.prefix:
        return False
    if op == "GreaterThan":
        return order == 1
    if op == "GreaterThanOrEqual":
        return order >= 0
    return order == 0


def version_matches(runtime_version: str, operator: str | None, model_version: str) -> bool:
    """Whether a runtime entry's version and operator accept the model's version (spec 3.3).

    Either version failing to parse means no match. A missing operator means Equal. If either
    version is unofficial, or the operator is "Equal", the versions must be equal (precision
    and prefix ignored). Otherwise precision and prefix must be the same, and then
    "GreaterThan" needs runtime > model, "GreaterThanOrEqual" runtime >= model, and any other
    operator (case-sensitive) equality. Results are cached.

    >>> version_matches("4.51.0", "GreaterThanOrEqual", "4.43.1")
    True
    >>> version_matches("1.0", "GreaterThan", "1.0.0")
    False
    """
    return _matches(runtime_version, operator, model_version)


def operator_problem(operator: str | None) -> str | None:
    """A warning when OME would not act on `operator` as written, or None.

    OME knows Equal, GreaterThan and GreaterThanOrEqual (case-sensitive); a missing operator
    is Equal. Anything else still requires the same precision and prefix, then compares for
    equality.

    >>> operator_problem("GreaterThan") is None
    True
    >>> operator_problem("greaterThan")
    'operator "greaterThan" is not one of Equal, GreaterThan, GreaterThanOrEqual \
(operators are case-sensitive: did you mean "GreaterThan"?); OME compares as Equal, \
and first requires the same number of parts and the same "v" prefix unless either version \
has a pre-release, build or dev part'
    """
    if operator is None or operator in KNOWN_OPERATORS:
        return None
    hint = ""
    for known in KNOWN_OPERATORS:
        if operator.strip().casefold() == known.casefold():
            hint = f" (operators are case-sensitive: did you mean {_quote(known)}?)"
    return (
        f"operator {_quote(operator)} is not one of {', '.join(KNOWN_OPERATORS)}{hint}; "
        'OME compares as Equal, and first requires the same number of parts and the same "v" '
        "prefix unless either version has a pre-release, build or dev part"
    )
