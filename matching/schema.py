"""Manifests checked against OME's own CRD schemas (schemas/, with their source), as the API
server and `kubectl apply` (strict field validation) would: the one validation of every entry
point (`matching diff`, `manage.py whatif`, the what-if page and APIs).

The schemas are Kubernetes structural schemas, so a small subset of OpenAPI suffices: `type`,
`properties`, `additionalProperties`, `items`, `required`, `enum`, `pattern`, `minimum`,
`minLength`, `x-kubernetes-int-or-string` and `x-kubernetes-preserve-unknown-fields`. An API
server prunes fields its schema does not declare, and kubectl's strict validation rejects
them, so an object that declares properties is closed to others here. A missing required
field is a warning (the objects can still be evaluated); a null is dropped by the API server.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from .positions import NOWHERE, Positions
from .problems import WARNING, Problem

_FOLDER = Path(__file__).resolve().parent / "schemas"
_SCHEMA_FILES = {
    "BaseModel": "basemodel.json",
    "ClusterBaseModel": "basemodel.json",
    "ServingRuntime": "servingruntime.json",
    "ClusterServingRuntime": "servingruntime.json",
}
MAX_PROBLEMS = 50
UNKNOWN_FIELD = "unknown field: OME's CRD does not declare it (the API server drops it, kubectl rejects it)"
_TYPES: dict[str, tuple[type, ...]] = {
    "integer": (int,),
    "string": (str,),
    "object": (Mapping,),
    "array": (list, tuple),
    "boolean": (bool,),
    "number": (int, float),
}
_TYPE_WORDS = {
    "integer": "an integer",
    "string": "a string",
    "object": "a mapping",
    "array": "a list",
    "boolean": "a boolean",
    "number": "a number",
}
FieldPath = tuple[str | int, ...]


@cache
def _schema(file_name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((_FOLDER / file_name).read_text())
    return loaded


@cache
def _pattern(text: str) -> re.Pattern[str]:
    return re.compile(text)


def path_text(parts: FieldPath) -> str:
    """`("spec", "entries", 0, "name")` as `spec.entries[0].name`."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _suggestion(word: str, choices: list[str]) -> str | None:
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    if not close:
        close = [choice for choice in choices if choice.lower() == word.lower()]
    return f"did you mean {close[0]}?" if close else None


def _is(value: Any, type_name: str) -> bool:
    if isinstance(value, bool) and type_name != "boolean":
        return False
    return isinstance(value, _TYPES.get(type_name, (object,)))


class _Walk:
    """One object's violations; `stored`: the cluster's copy, whose unknown fields are kept."""

    def __init__(self, stored: Mapping[str, Any] | None) -> None:
        self.stored = stored
        self.found: list[tuple[FieldPath, Problem]] = []

    def problem(self, at: FieldPath, message: str, hint: str | None = None, severity: str = "error") -> None:
        self.found.append((at, Problem(path_text(at) or "(object)", message, hint, severity)))

    def value(self, value: Any, schema: Mapping[str, Any], at: FieldPath) -> None:
        if value is None or len(self.found) >= MAX_PROBLEMS:
            return
        if schema.get("x-kubernetes-int-or-string"):
            if not (_is(value, "integer") or _is(value, "string")):
                self.problem(at, f"{value!r} must be an integer or a string")
            elif isinstance(value, str):
                self.scalar(value, schema, at)
            return
        type_name = schema.get("type")
        if isinstance(type_name, str) and not _is(value, type_name):
            expected = _TYPE_WORDS.get(type_name, type_name)
            self.problem(at, f"expected {expected}, got {json.dumps(value, default=str)[:80]}")
            return
        if isinstance(value, Mapping):
            self.mapping(value, schema, at)
        elif isinstance(value, (list, tuple)):
            items = schema.get("items")
            for index, item in enumerate(value):
                if isinstance(items, Mapping):
                    self.value(item, items, (*at, index))
        else:
            self.scalar(value, schema, at)

    def scalar(self, value: Any, schema: Mapping[str, Any], at: FieldPath) -> None:
        allowed = schema.get("enum")
        if isinstance(allowed, list) and value not in allowed:
            words = [str(item) for item in allowed]
            self.problem(at, f"{value!r} is not one of {', '.join(words)}", _suggestion(str(value), words))
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and isinstance(value, str) and not _pattern(pattern).search(value):
            if "[KMGTPE]i" in pattern:
                self.problem(at, f"{value!r} is not a Kubernetes quantity (such as 2, 500m or 4Gi)")
            else:
                self.problem(at, f"{value!r} is malformed: it must match {pattern}")
        minimum = schema.get("minimum")
        if isinstance(minimum, (int, float)) and _is(value, "number") and value < minimum:
            self.problem(at, f"{value} is less than the minimum of {minimum}")
        shortest = schema.get("minLength")
        if isinstance(shortest, int) and isinstance(value, str) and len(value) < shortest:
            self.problem(at, f"{value!r} is shorter than {shortest} characters")

    def mapping(self, value: Mapping[str, Any], schema: Mapping[str, Any], at: FieldPath) -> None:
        declared = schema.get("properties")
        declared = declared if isinstance(declared, Mapping) else {}
        others = schema.get("additionalProperties")
        closed = bool(declared) and others is None and not schema.get("x-kubernetes-preserve-unknown-fields")
        for name in schema.get("required") or ():
            if name not in value:
                message = f"'{name}' is a required property: the API server would refuse the object"
                self.problem(at, message, severity=WARNING)
        for key, item in value.items():
            if key in declared:
                self.value(item, declared[key], (*at, key))
            elif isinstance(others, Mapping):
                self.value(item, others, (*at, key))
            elif closed and not self.held(at, key):
                self.problem((*at, key), UNKNOWN_FIELD, _suggestion(str(key), [str(name) for name in declared]))

    def held(self, at: FieldPath, key: str) -> bool:
        """Whether the cluster's copy holds the field too (it came from a newer OME)."""
        current: Any = self.stored
        for part in (*at, key):
            if isinstance(current, list) and isinstance(part, int) and part < len(current):
                current = current[part]
                continue
            if not isinstance(current, Mapping) or part not in current:
                return False
            current = current[part]
        return True


def schema_violations(
    obj: Mapping[str, Any], stored: Mapping[str, Any] | None = None
) -> list[tuple[FieldPath, Problem]]:
    """(field path, problem) for each violation of the object's kind's CRD schema, in path
    order, at most MAX_PROBLEMS; [] for kinds without a schema here."""
    file_name = _SCHEMA_FILES.get(str(obj.get("kind")))
    if file_name is None:
        return []
    walk = _Walk(stored)
    walk.value(obj, _schema(file_name), ())
    return sorted(walk.found, key=lambda found: [str(part) for part in found[0]])[:MAX_PROBLEMS]


def schema_problems(obj: Mapping[str, Any], stored: Mapping[str, Any] | None = None) -> list[Problem]:
    """The object's violations of its kind's CRD schema (see schema_violations), unlocated."""
    return [problem for _at, problem in schema_violations(obj, stored)]


def manifest_problems(
    obj: Mapping[str, Any],
    *,
    positions: Positions = NOWHERE,
    file: str | None = None,
    document: int | None = None,
    stored: Mapping[str, Any] | None = None,
    lenient: bool = False,
) -> list[Problem]:
    """The object's schema problems located in its manifest (file, document, the line of each
    field, the object's name); `lenient` demotes errors to warnings, for trees that carry
    fields of another OME version."""
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    named = f"{obj.get('kind')} {name}" if isinstance(name, str) else None
    found = []
    for at, problem in schema_violations(obj, stored):
        located = problem.located(file=file, document=document, line=positions.line_of(at), obj=named)
        found.append(located.demoted() if lenient else located)
    return found
