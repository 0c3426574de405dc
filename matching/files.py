"""Reading manifest files for the command line (and for loaders that want the same rules).

The one module of `matching` that uses PyYAML, imported only when a file is read. `load_text`
is the one bounded reader of every untrusted text (manifests, policy files, the what-if, the CI
check, the admin's form, the command line and the GitHub Action): it caps the bytes, refuses YAML
anchors and aliases (no manifest needs them, and they are how 540 bytes expand into gigabytes, a
"billion laughs"), and counts documents and values before anything is built.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .positions import NOWHERE, Origin, Positions
from .positions import Path as FieldPath

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True, slots=True)
class TextLimits:
    """What one untrusted text may hold: bytes (UTF-8), documents, and values (scalars,
    mappings and lists, all documents together)."""

    max_bytes: int = 4 * 1024 * 1024
    max_documents: int = 2_000
    max_nodes: int = 200_000


class TextRefused(ValueError):
    """A text the bounded reader refuses before building anything: too large, too many documents
    or values, YAML anchors and aliases, or not YAML at all (then `__cause__` is PyYAML's error).
    `document` is 1-based when one is named."""

    def __init__(self, message: str, document: int | None = None) -> None:
        super().__init__(message)
        self.document = document


@dataclass(frozen=True, slots=True)
class Document:
    """One document of a manifest file: `obj`, or `error` when it could not be read.

    `index` counts documents in the file from 0; items unpacked from a `List` keep their
    document's index and get `item` set. `positions` gives the line of each of `obj`'s fields
    (YAML files; a JSON file's document has none).
    """

    path: str
    index: int
    obj: dict[str, Any] | None = None
    error: str | None = None
    item: int | None = None
    positions: Positions = NOWHERE

    @property
    def origin(self) -> Origin:
        return Origin(self.path, self.index, self.item, self.positions)

    @property
    def line(self) -> int | None:
        """The line where the document (or the `List` item) starts."""
        return self.positions.line_of(())

    @property
    def where(self) -> str:
        return self.origin.where


def manifest_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """The files named, and the manifest files under the folders named, in a stable order.
    Hidden files and folders under a folder (`.git`, `.github`, ...) are not manifests."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            yield from sorted(
                p
                for p in path.rglob("*")
                if p.is_file() and p.suffix in MANIFEST_SUFFIXES and not _hidden(p.relative_to(path))
            )
        else:
            yield path


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def load_text(text: str, *, json_text: bool = False, limits: TextLimits = TextLimits()) -> list[tuple[Any, Positions]]:
    """Every document of a manifest text with the positions of its fields, within `limits`.
    Raises TextRefused (a ValueError) for text over the limits or with YAML aliases, and
    ValueError (json's errors are ValueErrors too) for text that is not YAML, or not JSON when
    `json_text`."""
    if len(text) > limits.max_bytes or len(text.encode("utf-8", "surrogatepass")) > limits.max_bytes:
        raise TextRefused(f"the text is larger than {limits.max_bytes} bytes")
    if json_text:
        value = json.loads(text)
        count_values(value, limits)
        return [(value, NOWHERE)]
    import yaml

    _check_events(text, limits)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    documents: list[tuple[Any, Positions]] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            lines: dict[FieldPath, int] = {}
            _record_lines(node, (), lines)
            documents.append((loader.construct_document(node), Positions(lines)))
    except yaml.YAMLError as error:
        raise ValueError(f"invalid YAML: {error}") from error
    finally:
        loader.dispose()
    return documents


def _check_events(text: str, limits: TextLimits) -> None:
    """Before anything is built, from the parser's events (linear in the text): no anchor or
    alias, at most `limits.max_documents` documents and `limits.max_nodes` values."""
    import yaml

    values = (yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent)
    nodes = number = 0
    try:
        for event in yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(event, yaml.DocumentStartEvent):
                number += 1
                if number > limits.max_documents:
                    raise TextRefused(f"the text has more than {limits.max_documents} documents")
            nodes += isinstance(event, values)
            if nodes > limits.max_nodes:
                raise TextRefused(f"the text has more than {limits.max_nodes} values", document=number)
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                mark = event.start_mark
                where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
                raise TextRefused(f"invalid YAML{where}: YAML aliases are not accepted (nor anchors)", document=number)
    except yaml.YAMLError as error:
        raise TextRefused(f"invalid YAML: {error}", document=max(number, 1)) from error


def count_values(value: Any, limits: TextLimits) -> None:
    """Raise TextRefused when a value already built (a JSON text, a request's mappings) holds
    more than `limits.max_nodes` values; counted without recursion."""
    nodes, pending = 0, [value]
    while pending:
        item = pending.pop()
        nodes += 1
        if nodes > limits.max_nodes:
            raise TextRefused(f"the text has more than {limits.max_nodes} values", document=1)
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)


def _record_lines(node: Any, path: FieldPath, lines: dict[FieldPath, int]) -> None:
    """The line of every key and item under `node` (a composed YAML node), iteratively: a
    document may nest deeper than Python's recursion limit."""
    import yaml

    pending = [(node, path)]
    while pending:
        node, path = pending.pop()
        lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    lines.setdefault((*path, key.value), key.start_mark.line + 1)
                    pending.append((value, (*path, key.value)))
        elif isinstance(node, yaml.SequenceNode):
            pending.extend((item, (*path, index)) for index, item in enumerate(node.value))


def read_documents(paths: Iterable[str | Path], limits: TextLimits = TextLimits()) -> Iterator[Document]:
    """Every document of every file, `List` kinds unpacked; empty documents skipped. Each file
    is read by the bounded reader (`load_text`, within `limits`)."""
    for path in manifest_files(paths):
        try:
            if path.stat().st_size > limits.max_bytes:
                raise TextRefused(f"the file is larger than {limits.max_bytes} bytes")
            text = path.read_text(encoding="utf-8")
            documents = load_text(text, json_text=path.suffix == ".json", limits=limits)
        except OSError as error:
            yield Document(str(path), 0, error=f"cannot read: {error.strerror or error}")
            continue
        except ValueError as error:  # also UnicodeDecodeError and json's errors
            yield Document(str(path), 0, error=str(error).replace("\n", " "))
            continue
        for index, (obj, positions) in enumerate(documents):
            yield from _unpack(str(path), index, obj, positions)


def _unpack(path: str, index: int, obj: Any, positions: Positions) -> Iterator[Document]:
    if obj is None:
        return
    if not isinstance(obj, dict):
        yield Document(path, index, error=f"expected a mapping, got {type(obj).__name__}", positions=positions)
        return
    kind = obj.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list):
        for item_index, item in enumerate(obj["items"]):
            at = positions.within(("items", item_index))
            if isinstance(item, dict):
                yield Document(path, index, obj=item, item=item_index, positions=at)
            else:
                error = f"expected a mapping, got {type(item).__name__}"
                yield Document(path, index, error=error, item=item_index, positions=at)
        return
    yield Document(path, index, obj=obj, positions=positions)
