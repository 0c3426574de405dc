"""The policy format's JSON Schema (`schema.json`, shipped beside this module) and the small
interpreter that checks a document against it with the standard library only.

The schema file is the one definition of the format: editors and `jsonschema` read it, and
`problems` reads the same file, so the command line, the dashboard and the documentation
cannot drift apart. `problems` understands the keywords of `KEYWORDS`, the subset the file
uses (a test walks the file and fails on any other keyword).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from ..positions import Path as FieldPath

SCHEMA_FILE = Path(__file__).with_name("schema.json")
KEYWORDS = frozenset(
    {
        "$schema", "$id", "$defs", "$ref", "title", "description",
        "type", "properties", "additionalProperties", "required", "propertyNames",
        "enum", "const", "pattern", "minLength", "items", "minItems", "maxItems", "minimum", "minProperties",
        "allOf", "anyOf", "if", "then",
    }
)  # fmt: skip
"""Every JSON Schema keyword `problems` interprets."""

Problem = tuple[FieldPath, str]
"""(path of the bad value from the document's root, what is wrong with it)."""

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
}


@cache
def policy_schema() -> Mapping[str, Any]:
    """The parsed schema.json."""
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def problems(document: object) -> list[Problem]:
    """Every way `document` breaks the schema, in document order; [] when it is valid.

    >>> problems({"apiVersion": "compat.ome.io/v1alpha1", "kind": "RuntimePolicy",
    ...           "metadata": {"name": "p"}, "spec": {"assertions": [{"name": "a", "assert": "x"}]}})
    [(('spec', 'assertions', 0, 'assert'), "'x' is not one of servedBy, hasRuntime, pickUnchanged, notBlocked, decisionUnchanged, pickCount, notShadowed, minScore, notIgnored")]
    """
    return list(_check(policy_schema(), document, ()))


def _resolve(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    while "$ref" in schema:
        name = str(schema["$ref"]).removeprefix("#/$defs/")
        schema = {**policy_schema()["$defs"][name], **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _is(value: object, kind: str) -> bool:
    return isinstance(value, _TYPES[kind]) and not (kind == "integer" and isinstance(value, bool))


def _check(schema: Mapping[str, Any], value: object, path: FieldPath) -> Iterator[Problem]:
    schema = _resolve(schema)
    if "type" in schema and not _is(value, schema["type"]):
        yield path, f"expected {'an' if schema['type'][0] in 'aeiou' else 'a'} {schema['type']}, got {_kind(value)}"
        return
    if "enum" in schema and value not in schema["enum"]:
        yield path, f"{value!r} is not one of {_choices(schema['enum'])}"
    if "const" in schema and value != schema["const"]:
        yield path, f"expected {schema['const']!r}"
    if isinstance(value, str):
        yield from _check_string(schema, value, path)
    if isinstance(value, int) and "minimum" in schema and value < schema["minimum"]:
        yield path, f"{value} is below the minimum {schema['minimum']}"
    if isinstance(value, list):
        yield from _check_array(schema, value, path)
    if isinstance(value, dict):
        yield from _check_object(schema, value, path)
    yield from _check_combinations(schema, value, path)


def _check_string(schema: Mapping[str, Any], value: str, path: FieldPath) -> Iterator[Problem]:
    if len(value) < schema.get("minLength", 0):
        yield path, "must not be empty"
    if "pattern" in schema and not re.search(schema["pattern"], value):
        yield path, f"{value!r} does not match {schema['pattern']}"


def _check_array(schema: Mapping[str, Any], value: list[Any], path: FieldPath) -> Iterator[Problem]:
    if len(value) < schema.get("minItems", 0):
        yield path, f"needs at least {schema['minItems']} item(s)"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        yield path, f"takes at most {schema['maxItems']} item(s)"
    if "items" in schema:
        for index, item in enumerate(value):
            yield from _check(schema["items"], item, (*path, index))


def _check_object(schema: Mapping[str, Any], value: dict[Any, Any], path: FieldPath) -> Iterator[Problem]:
    for name in schema.get("required", ()):
        if name not in value:
            yield path, f"field {name!r} is required"
    properties = schema.get("properties", {})
    if len(value) < schema.get("minProperties", 0):
        yield path, f"set at least one of {_choices(properties)}"
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        at = (*path, str(key))
        if "propertyNames" in schema:
            yield from ((at, text) for _p, text in _check(schema["propertyNames"], str(key), at))
        if key in properties:
            yield from _check(properties[key], item, at)
        elif extra is False:
            yield at, f"unknown field {key!r}; known: {_choices(properties)}"
        elif isinstance(extra, Mapping):
            yield from _check(extra, item, at)


def _check_combinations(schema: Mapping[str, Any], value: object, path: FieldPath) -> Iterator[Problem]:
    for part in schema.get("allOf", ()):
        yield from _check(part, value, path)
    if "anyOf" in schema:
        options = schema["anyOf"]
        if all(list(_check(option, value, path)) for option in options):
            needed = [" and ".join(option.get("required", ())) for option in options]
            yield path, f"needs one of: {', '.join(needed)}"
    if "if" in schema and not list(_check(schema["if"], value, path)):
        yield from _check(schema.get("then", {}), value, path)


def _choices(values: Iterable[object]) -> str:
    return ", ".join(str(value) for value in values)


def _kind(value: object) -> str:
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", type(None): "nothing"}.get(
        type(value), type(value).__name__
    )
