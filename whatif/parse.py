"""Reading a what-if's input: manifest text (YAML or JSON, several documents), mappings or lists
of them, and object keys; each object checked against OME's CRD schemas (`matching.schema`,
the one validation of every entry point) and normalised as loading a manifest does. Bad input
raises `WhatIfError`, naming the document (1-based), the line and the field."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

import yaml
from django.conf import settings

import matching
from inventory.models import CLUSTER_SCOPED, MODEL_KINDS, RUNTIME_KINDS
from matching import Model, ObjectKey, Positions, Problem, Runtime

from .errors import WhatIfError

Parsed = Model | Runtime
Stored = Callable[[Mapping[str, Any]], Mapping[str, Any] | None]
"""The cluster's stored version of a (normalised) object, or None."""


class Numbered(NamedTuple):
    """One document of the input: its 1-based number, its value, the line of each field."""

    number: int
    value: Any
    positions: Positions = matching.Positions()


class Read(NamedTuple):
    """One model or runtime of the input: as normalised, parsed, and its schema warnings."""

    obj: dict[str, Any]
    value: Parsed
    warnings: list[Problem]


def limits() -> matching.TextLimits:
    """The what-if's bounds for the one bounded reader (matching.load_text)."""
    return matching.TextLimits(
        max_bytes=settings.OME_WHATIF_MAX_BYTES,
        max_documents=settings.OME_WHATIF_MAX_DOCUMENTS,
        max_nodes=settings.OME_WHATIF_MAX_NODES,
    )


def count_nodes(value: Any) -> None:
    """The JSON form's cap: at most OME_WHATIF_MAX_NODES values."""
    try:
        matching.count_values(value, limits())
    except matching.TextRefused as refused:
        raise WhatIfError(f"{refused} (OME_WHATIF_MAX_NODES)") from None


def _yaml_error(error: yaml.YAMLError, number: int) -> WhatIfError:
    problem = getattr(error, "problem", None) or str(error).splitlines()[0]
    if "nesting depth" in problem:  # libyaml's own limit
        return WhatIfError("the YAML is nested too deeply", document=number)
    mark = getattr(error, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return WhatIfError(f"invalid YAML{where}: {problem}", document=number)


def _load_yaml(text: str) -> list[Numbered]:
    """Every non-empty document, numbered from 1, with its positions; safe types, no aliases,
    within the what-if's limits."""
    try:
        loaded = matching.load_text(text, limits=limits())
    except RecursionError:
        raise WhatIfError("the YAML is nested too deeply") from None
    except matching.TextRefused as refused:
        cause, number = refused.__cause__, refused.document or 1
        raise (
            _yaml_error(cause, number)
            if isinstance(cause, yaml.YAMLError)
            else WhatIfError(str(refused), document=refused.document)
        ) from None
    except ValueError as error:
        cause = error.__cause__
        raise (_yaml_error(cause, 1) if isinstance(cause, yaml.YAMLError) else WhatIfError(str(error))) from None
    return [Numbered(number, value, at) for number, (value, at) in enumerate(loaded, start=1) if value is not None]


def _documents(source: Any) -> list[Numbered]:
    if isinstance(source, bytes):
        if len(source) > settings.OME_WHATIF_MAX_BYTES:
            raise WhatIfError(f"the manifests are larger than {settings.OME_WHATIF_MAX_BYTES} bytes")
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as error:
            raise WhatIfError(f"the manifests are not UTF-8 text ({error.reason} at byte {error.start})") from None
    if isinstance(source, str):
        return _load_yaml(source)
    if isinstance(source, Mapping):
        count_nodes(source)
        return [Numbered(1, source)]
    if isinstance(source, Sequence):
        count_nodes([item for item in source if not isinstance(item, str | bytes)])
        found: list[Numbered] = []
        for number, item in enumerate(source, start=1):
            if isinstance(item, (str, bytes)):
                found += [Numbered(number, value, at) for _, value, at in _documents(item)]
            elif item is not None:
                found.append(Numbered(number, item))
        return found
    raise WhatIfError(f"expected manifest text, a mapping or a list of mappings, got {type(source).__name__}")


def _unpack(documents: list[Numbered]) -> Iterator[Numbered]:
    """A top-level list or a `*List` kind counts as its items (same document number)."""
    for number, value, at in documents:
        if isinstance(value, list):
            yield from (Numbered(number, item, at.within((i,))) for i, item in enumerate(value) if item is not None)
        elif (
            isinstance(value, Mapping)
            and str(value.get("kind", "")).endswith("List")
            and isinstance(value.get("items"), list)
        ):
            items = value["items"]
            yield from (
                Numbered(number, item, at.within(("items", i))) for i, item in enumerate(items) if item is not None
            )
        else:
            yield Numbered(number, value, at)


def read_documents(source: Any) -> list[Numbered]:
    """Every item of the input, lists unpacked, with the what-if's limits and YAML rules.
    Raises WhatIfError."""
    return list(_unpack(_documents(source)))


def checked(document: Numbered, *, stored: Mapping[str, Any] | None = None, lenient: bool = False) -> list[Problem]:
    """The document's problems with OME's CRD schema, located (document number, line)."""
    return matching.manifest_problems(
        document.value, positions=document.positions, document=document.number, stored=stored, lenient=lenient
    )


def refuse(problems: list[Problem]) -> None:
    """WhatIfError carrying every problem, errors and warnings together, when any is an error;
    its message names the first error."""
    errors = [problem for problem in problems if problem.is_error]
    if not errors:
        return
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    raise WhatIfError(
        f"{first.message}{more}", document=first.document, obj=first.obj, field=first.path, problems=problems
    )


def normalise(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What loading a manifest does to it: CRD defaults, and namespace "default" when absent."""
    return matching.as_applied(obj)


def parse_documents(source: Any, stored: Stored | None = None) -> list[tuple[dict[str, Any], Parsed]]:
    """(normalised object, parsed value) per model or runtime of the input (see read_manifests)."""
    return [(read.obj, read.value) for read in read_manifests(source, stored)]


def read_manifests(source: Any, stored: Stored | None = None, *, lenient: bool = False) -> list[Read]:
    """Manifest text (YAML or JSON, several documents), a mapping or a list of mappings -> each
    model or runtime normalised and parsed, with its schema warnings. Every document is checked
    against OME's CRD schema first (`stored` gives the cluster's version of an object, whose
    fields are not blamed on the edit; `lenient` demotes errors to warnings); the problems of
    all documents come back together. Raises WhatIfError."""
    limit = settings.OME_WHATIF_MAX_DOCUMENTS
    valid: list[tuple[int, Mapping[str, Any], list[Problem]]] = []
    problems: list[Problem] = []
    for document in _unpack(_documents(source)):
        number, value = document.number, document.value
        if len(valid) >= limit:
            raise WhatIfError(f"more than {limit} objects in one what-if", document=number)
        if not isinstance(value, Mapping):
            raise WhatIfError(f"expected a mapping, got {type(value).__name__}", document=number)
        kind = value.get("kind")
        if kind not in MODEL_KINDS and kind not in RUNTIME_KINDS:
            raise WhatIfError(
                f"a what-if takes BaseModel, ClusterBaseModel, ServingRuntime or ClusterServingRuntime, got {kind!r}",
                document=number,
                field="kind",
            )
        found = checked(document, stored=None if stored is None else stored(normalise(value)), lenient=lenient)
        problems += found
        valid.append((number, value, [problem for problem in found if not problem.is_error]))
    refuse(problems)
    return [_parsed(number, value, warnings) for number, value, warnings in valid]


def _parsed(number: int, value: Mapping[str, Any], warnings: list[Problem]) -> Read:
    try:
        obj = normalise(value)
        item = matching.parse_object(obj)
    except matching.ManifestError as error:
        raise WhatIfError(error.problem, document=number, obj=error.obj, field=error.field) from None
    except RecursionError:
        raise WhatIfError("the object is nested too deeply", document=number) from None
    if not isinstance(item, (Model, Runtime)):  # read_manifests refused the other kinds already
        raise WhatIfError(
            f"a what-if takes models and runtimes, not {obj.get('kind')!r}", document=number, field="kind"
        )
    return Read(obj, item, warnings)


def parse_key(value: Any) -> ObjectKey:
    """A model or runtime key: (kind, namespace, name), {"kind", "namespace", "name"}, or the
    text `Kind/name` (cluster-scoped) or `Kind/namespace/name`."""
    if isinstance(value, str):
        parts = value.split("/")
        if len(parts) == 2:
            value = (parts[0], "", parts[1])
        elif len(parts) == 3:
            value = tuple(parts)
        else:
            raise WhatIfError(f"{value!r} is not Kind/name or Kind/namespace/name", field="deletions")
    elif isinstance(value, Mapping):
        value = (value.get("kind"), value.get("namespace") or "", value.get("name"))
    if not isinstance(value, (tuple, list)) or len(value) != 3 or not all(isinstance(part, str) for part in value):
        raise WhatIfError(f"{value!r} is not a (kind, namespace, name) key", field="deletions")
    kind, namespace, name = value
    if kind not in MODEL_KINDS and kind not in RUNTIME_KINDS:
        raise WhatIfError(f"{kind!r} is not a model or runtime kind", field="deletions")
    if not name:
        raise WhatIfError("the name is empty", field="deletions")
    if kind in CLUSTER_SCOPED:
        namespace = ""
    elif not namespace:
        namespace = matching.DEFAULT_NAMESPACE
    return (kind, namespace, name)
