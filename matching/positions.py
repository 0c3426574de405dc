"""Where a value stands in the manifest text it was read from: the 1-based line of every key
and item of a document, so that an error or a finding can point at the line that caused it.

`Positions` maps a path (keys and list indexes from the document's root, as in
`("spec", "supportedModelFormats", 0, "name")`) to the line where that value starts. A path
that is not recorded (a missing field, an object read from JSON or built in code) answers with
its deepest recorded ancestor, so a "field required" error points at the mapping that lacks it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

Path = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Positions:
    lines: Mapping[Path, int] = field(default_factory=lambda: MappingProxyType({}))

    def line_of(self, path: Sequence[str | int] = ()) -> int | None:
        """The line of `path`, else of its deepest recorded ancestor; None when nothing is recorded."""
        at = tuple(path)
        while True:
            line = self.lines.get(at)
            if line is not None or not at:
                return line
            at = at[:-1]

    def within(self, prefix: Sequence[str | int]) -> Positions:
        """The positions under `prefix`, re-rooted there (an item of a `List` document)."""
        size = len(prefix)
        head = tuple(prefix)
        return Positions(
            MappingProxyType({path[size:]: line for path, line in self.lines.items() if path[:size] == head})
        )


NOWHERE = Positions()


@dataclass(frozen=True, slots=True)
class Origin:
    """The document an object was read from: its file, the document's index in the file (from
    0), the item of a `List` document, and the positions of its fields."""

    file: str
    document: int
    item: int | None = None
    positions: Positions = NOWHERE

    @property
    def line(self) -> int | None:
        return self.positions.line_of(())

    @property
    def where(self) -> str:
        place = f"{self.file}: document {self.document}"
        return place if self.item is None else f"{place}, item {self.item}"
