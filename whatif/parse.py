"""Reading a what-if's input: manifest text (YAML or JSON, several documents), mappings or lists
of them, and object keys; each object normalised as loading a manifest does. Bad input raises
`WhatIfError`, naming the document (1-based) and the field."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import yaml
from django.conf import settings

import matching
from inventory.models import CLUSTER_SCOPED, MODEL_KINDS, RUNTIME_KINDS
from matching import Model, ObjectKey, Runtime

from .errors import WhatIfError

Parsed = Model | Runtime


class _NoAliasLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors and aliases: no manifest needs them, and aliases are how
    a small text expands into a huge value (a "billion laughs")."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "YAML aliases are not accepted", event.start_mark)
        return super().compose_node(parent, index)


def _load_yaml(text: str) -> list[tuple[int, Any]]:
    """(1-based document number, value) for every non-empty document; safe types, no aliases."""
    found: list[tuple[int, Any]] = []
    number = 0
    try:
        for number, value in enumerate(yaml.load_all(text, Loader=_NoAliasLoader), start=1):
            if value is not None:
                found.append((number, value))
    except RecursionError:
        raise WhatIfError("the YAML is nested too deeply", document=number + 1) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise WhatIfError(f"invalid YAML{where}: {problem}", document=number + 1) from None
    return found


def _documents(source: Any) -> list[tuple[int, Any]]:
    if isinstance(source, bytes):
        if len(source) > settings.OME_WHATIF_MAX_BYTES:
            raise WhatIfError(f"the manifests are larger than {settings.OME_WHATIF_MAX_BYTES} bytes")
        try:
            source = source.decode("utf-8")
        except UnicodeDecodeError as error:
            raise WhatIfError(f"the manifests are not UTF-8 text ({error.reason} at byte {error.start})") from None
    if isinstance(source, str):
        limit = settings.OME_WHATIF_MAX_BYTES
        if len(source) > limit or len(source.encode("utf-8", "surrogatepass")) > limit:
            raise WhatIfError(f"the manifests are larger than {limit} bytes")
        return _load_yaml(source)
    if isinstance(source, Mapping):
        return [(1, source)]
    if isinstance(source, Sequence):
        found: list[tuple[int, Any]] = []
        for number, item in enumerate(source, start=1):
            if isinstance(item, (str, bytes)):
                found += [(number, value) for _, value in _documents(item)]
            elif item is not None:
                found.append((number, item))
        return found
    raise WhatIfError(f"expected manifest text, a mapping or a list of mappings, got {type(source).__name__}")


def _unpack(documents: list[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    """A top-level list or a `*List` kind counts as its items (same document number)."""
    for number, value in documents:
        if isinstance(value, list):
            yield from ((number, item) for item in value if item is not None)
        elif (
            isinstance(value, Mapping)
            and str(value.get("kind", "")).endswith("List")
            and isinstance(value.get("items"), list)
        ):
            yield from ((number, item) for item in value["items"] if item is not None)
        else:
            yield number, value


def read_documents(source: Any) -> list[tuple[int, Any]]:
    """(1-based document number, value) of every item of the input, lists unpacked, with the
    what-if's limits and YAML rules. Raises WhatIfError."""
    return list(_unpack(_documents(source)))


def normalise(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What loading a manifest does to it: CRD defaults, and namespace "default" when absent."""
    return matching.as_applied(obj)


def parse_documents(source: Any) -> list[tuple[dict[str, Any], Parsed]]:
    """Manifest text (YAML or JSON, several documents), a mapping or a list of mappings ->
    (normalised object, parsed value) per model or runtime. Raises WhatIfError."""
    documents = _documents(source)
    limit = settings.OME_WHATIF_MAX_DOCUMENTS
    parsed: list[tuple[dict[str, Any], Parsed]] = []
    for number, value in _unpack(documents):
        if len(parsed) >= limit:
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
        try:
            obj = normalise(value)
            item = matching.parse_object(obj)
        except matching.ManifestError as error:
            raise WhatIfError(error.problem, document=number, obj=error.obj, field=error.field) from None
        except RecursionError:
            raise WhatIfError("the object is nested too deeply", document=number) from None
        assert isinstance(item, (Model, Runtime))
        parsed.append((obj, item))
    return parsed


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
