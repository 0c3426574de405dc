"""RFC 6902 JSON patches of the kinds fixes write (`add`, `remove`, `replace`), as
`kubectl patch --type json` applies them, and the pointers they address."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

Operation = dict[str, Any]


def pointer(*parts: str | int) -> str:
    """A JSON pointer (RFC 6901) to the path: `pointer("spec", "a/b", 0)` is `/spec/a~1b/0`."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


def _parts(path: str) -> list[str]:
    if not path.startswith("/"):
        raise ValueError(f"{path!r} is not a JSON pointer")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _parent(document: Any, parts: list[str]) -> Any:
    current = document
    for part in parts[:-1]:
        if isinstance(current, dict) and part in current:
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            raise ValueError(f"{pointer(*parts)}: {part!r} is not there")
    return current


def _apply(document: Any, operation: Mapping[str, Any]) -> None:
    if not isinstance(operation, Mapping):
        raise ValueError(f"an operation must be an object, got {type(operation).__name__}")
    kind, parts = operation.get("op"), _parts(str(operation.get("path", "")))
    parent, last = _parent(document, parts), parts[-1]
    if isinstance(parent, list) and last == "-" and kind == "add":
        parent.append(copy.deepcopy(operation["value"]))  # RFC 6902: "-" appends
        return
    if isinstance(parent, list):
        if not last.isdigit() or int(last) >= len(parent) or kind == "add":
            raise ValueError(f"{operation['path']}: fixes change list items by index, or append with -")
        index: Any = int(last)
    elif isinstance(parent, dict):
        index = last
    else:
        raise ValueError(f"{operation['path']}: the parent is not an object or a list")
    if (kind == "remove" or kind == "replace") and isinstance(parent, dict) and last not in parent:
        raise ValueError(f"{operation['path']}: nothing to {kind}")
    if kind == "remove":
        del parent[index]
    elif kind in ("add", "replace"):
        parent[index] = copy.deepcopy(operation["value"])
    else:
        raise ValueError(f"operation {kind!r} is not add, remove or replace")


def json_patch(document: Any, operations: Sequence[Mapping[str, Any]]) -> Any:
    """A new value: `document` with the operations applied in order. Raises ValueError."""
    if not isinstance(operations, Sequence) or isinstance(operations, str):
        raise ValueError("a JSON patch must be a list of operations")
    result = copy.deepcopy(document)
    for operation in operations:
        _apply(result, operation)
    return result


def merge_operations(target: Any, patch: Mapping[str, Any], *path: str | int) -> list[Operation]:
    """JSON patch operations that add what a merge patch of only additions adds to `target`
    (the value at `path`): one `add` per missing branch, descending into existing objects."""
    if not isinstance(target, Mapping):
        return [{"op": "add", "path": pointer(*path), "value": copy.deepcopy(dict(patch))}]
    found: list[Operation] = []
    for key, value in patch.items():
        if isinstance(value, Mapping) and isinstance(target.get(key), Mapping):
            found += merge_operations(target[key], value, *path, key)
        else:
            found.append({"op": "add", "path": pointer(*path, key), "value": copy.deepcopy(value)})
    return found
