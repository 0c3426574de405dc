"""Manifests checked against OME's own CRD schemas (schemas/, with their source) before a
what-if evaluates them, as the API server and `kubectl apply` (strict field validation) would.

An API server prunes fields its structural schema does not declare; kubectl's default strict
validation turns them into errors. JSON Schema allows unknown fields unless told otherwise, so
every object schema that declares properties is closed here (`additionalProperties: false`)
unless it already says what else it takes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import ValidationError

_FOLDER = Path(__file__).resolve().parent / "schemas"
_SCHEMA_FILES = {
    "BaseModel": "basemodel.json",
    "ClusterBaseModel": "basemodel.json",
    "ServingRuntime": "servingruntime.json",
    "ClusterServingRuntime": "servingruntime.json",
}
MAX_PROBLEMS = 50
_TYPE_WORDS = {
    "integer": "an integer",
    "string": "a string",
    "object": "a mapping",
    "array": "a list",
    "boolean": "a boolean",
    "number": "a number",
}


@dataclass(frozen=True)
class Problem:
    """One schema violation: the path of the field (`spec.supportedModelFormats[0].x`) and what
    is wrong. A missing required field does not block a what-if (`blocking` False): the
    objects it would change can still be evaluated, and the warning says the API server
    would refuse it."""

    path: str
    message: str
    blocking: bool = True
    parts: tuple[str | int, ...] = field(default=(), compare=False, repr=False)
    unknown: bool = field(default=False, compare=False, repr=False)

    def to_dict(self) -> dict[str, object]:
        return {"path": self.path, "message": self.message, "blocking": self.blocking}


def _closed(schema: Any) -> Any:
    """The schema with every object that declares properties closed to others, recursively."""
    if isinstance(schema, list):
        return [_closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    result = {key: _closed(value) if key != "enum" else value for key, value in schema.items()}
    declared = "properties" in schema and "additionalProperties" not in schema
    if declared and not schema.get("x-kubernetes-preserve-unknown-fields"):
        result["additionalProperties"] = False
    return result


@cache
def _validator(file_name: str) -> Draft7Validator:
    return Draft7Validator(_closed(json.loads((_FOLDER / file_name).read_text())))


def _path(parts: Iterator[Any] | Any) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _problems_of(error: ValidationError) -> list[Problem]:
    where = _path(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        declared = error.schema.get("properties", {})
        unknown = sorted(str(key) for key in error.instance if key not in declared)
        return [
            Problem(
                f"{where}.{name}" if where else name,
                "unknown field: OME's CRD does not declare it (the API server drops it, kubectl rejects it)",
                parts=(*error.absolute_path, name),
                unknown=True,
            )
            for name in unknown
        ]
    if error.validator == "enum":
        allowed = ", ".join(str(value) for value in error.validator_value)
        return [Problem(where, f"{error.instance!r} is not one of {allowed}")]
    if error.validator == "pattern" and "[KMGTPE]i" in str(error.validator_value):
        return [Problem(where, f"{error.instance!r} is not a Kubernetes quantity (such as 2, 500m or 4Gi)")]
    if error.validator == "pattern":
        return [Problem(where, f"{error.instance!r} is malformed: it must match {error.validator_value}")]
    if error.validator == "type":
        expected = _TYPE_WORDS.get(str(error.validator_value), str(error.validator_value))
        return [Problem(where or "(object)", f"expected {expected}, got {json.dumps(error.instance)[:80]}")]
    if error.validator == "required":
        return [
            Problem(where or "(object)", f"{error.message}: the API server would refuse the object", blocking=False)
        ]
    if error.validator == "anyOf" and error.schema.get("x-kubernetes-int-or-string"):
        return [Problem(where, f"{error.instance!r} must be an integer or a string")]
    return [Problem(where or "(object)", error.message)]


def _present(obj: Any, parts: tuple[str | int, ...]) -> bool:
    """Whether the path leads to a value in `obj`."""
    for part in parts:
        if isinstance(obj, list):
            if not isinstance(part, int) or part >= len(obj):
                return False
            obj = obj[part]
        elif isinstance(obj, Mapping) and part in obj:
            obj = obj[part]
        else:
            return False
    return True


def schema_problems(obj: Mapping[str, Any], stored: Mapping[str, Any] | None = None) -> list[Problem]:
    """The object's violations of its kind's CRD schema, by path, at most MAX_PROBLEMS.

    `stored`: the object as the cluster holds it; a field unknown to these schemas that it
    holds too came from the cluster (a newer OME), not from the edit, and is not reported."""
    file_name = _SCHEMA_FILES.get(str(obj.get("kind")))
    if file_name is None:
        return []
    found: list[Problem] = []
    for error in sorted(_validator(file_name).iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        if error.validator == "type" and error.instance is None:
            continue  # the API server drops a null where its schema does not allow one
        found += [
            problem
            for problem in _problems_of(error)
            if not (problem.unknown and stored is not None and _present(stored, problem.parts))
        ]
        if len(found) >= MAX_PROBLEMS:
            break
    return found[:MAX_PROBLEMS]
