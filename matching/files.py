"""Reading manifest files for the command line (and for loaders that want the same rules).

The one module of `matching` that uses PyYAML, imported only when a file is read.
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


def load_text(text: str, *, json_text: bool = False) -> list[tuple[Any, Positions]]:
    """Every document of a manifest text with the positions of its fields. Raises ValueError
    (json's errors are ValueErrors too) for text that is not YAML, or not JSON when `json_text`."""
    if json_text:
        return [(json.loads(text), NOWHERE)]
    import yaml

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


def read_documents(paths: Iterable[str | Path]) -> Iterator[Document]:
    """Every document of every file, `List` kinds unpacked; empty documents skipped."""
    for path in manifest_files(paths):
        try:
            documents = load_text(path.read_text(encoding="utf-8"), json_text=path.suffix == ".json")
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
