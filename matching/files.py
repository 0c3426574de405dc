"""Reading manifest files for the command line (and for loaders that want the same rules).

The one module of `matching` that uses PyYAML, imported only when a file is read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True, slots=True)
class Document:
    """One document of a manifest file: `obj`, or `error` when it could not be read.

    `index` counts documents in the file from 0; items unpacked from a `List` keep their
    document's index and get `item` set.
    """

    path: str
    index: int
    obj: dict[str, Any] | None = None
    error: str | None = None
    item: int | None = None

    @property
    def where(self) -> str:
        place = f"{self.path}: document {self.index}"
        return place if self.item is None else f"{place}, item {self.item}"


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


def _load_all(text: str, path: Path) -> list[Any]:
    if path.suffix == ".json":
        return [json.loads(text)]
    import yaml

    try:
        return list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError as error:
        raise ValueError(f"invalid YAML: {error}") from error


def read_documents(paths: Iterable[str | Path]) -> Iterator[Document]:
    """Every document of every file, `List` kinds unpacked; empty documents skipped."""
    for path in manifest_files(paths):
        try:
            documents = _load_all(path.read_text(encoding="utf-8"), path)
        except OSError as error:
            yield Document(str(path), 0, error=f"cannot read: {error.strerror or error}")
            continue
        except ValueError as error:  # also UnicodeDecodeError and json's errors
            yield Document(str(path), 0, error=str(error).replace("\n", " "))
            continue
        for index, obj in enumerate(documents):
            yield from _unpack(str(path), index, obj)


def _unpack(path: str, index: int, obj: Any) -> Iterator[Document]:
    if obj is None:
        return
    if not isinstance(obj, dict):
        yield Document(path, index, error=f"expected a mapping, got {type(obj).__name__}")
        return
    kind = obj.get("kind")
    if isinstance(kind, str) and kind.endswith("List") and isinstance(obj.get("items"), list):
        for item_index, item in enumerate(obj["items"]):
            if isinstance(item, dict):
                yield Document(path, index, obj=item, item=item_index)
            else:
                yield Document(path, index, error=f"expected a mapping, got {type(item).__name__}", item=item_index)
        return
    yield Document(path, index, obj=obj)
