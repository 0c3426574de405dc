"""From an OME object dict to the columns stored beside it; no database access here."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import matching
from core.redact import redact, redact_manifest
from matching import InferenceService, Model, Runtime

from .models import CLUSTER_SCOPED, Kind, Resource

VOLATILE_METADATA = ("managedFields",)
# kubectl's copy of the whole applied manifest, secrets and all; nothing here reads it.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def stored(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as the inventory stores (and every page shows) it: without kubectl's
    last-applied-configuration annotation, and with every credential redacted
    (core.redact.redact_manifest) except in its identity (metadata other than annotations),
    which a credential has no business in and every lookup reads."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        return redact_manifest(obj)  # parse_* names the missing metadata
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        kept = {key: value for key, value in annotations.items() if key != LAST_APPLIED}
        metadata = {**metadata, "annotations": redact_manifest(kept)}
    return {key: metadata if key == "metadata" else redact_manifest(value, key) for key, value in obj.items()}


# Kubernetes' limit for names and namespaces; a longer one cannot be stored (unique index).
NAME_MAX = 253
# Indexed columns are bounded: a longer value from the cluster is left out of its column (so a
# filter on it finds nothing) and the object's store_error says so. The object is stored whole.
BOUNDED_COLUMNS = ("model_format", "pipeline_class", "storage_scheme")
BIGINT_MAX = 2**63 - 1


def identity(obj: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(kind, namespace, name), or None when the object cannot be identified."""
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    if kind not in Kind.values or not isinstance(metadata, Mapping):
        return None
    name, namespace = metadata.get("name"), metadata.get("namespace")
    if not isinstance(name, str) or not name or len(name) > NAME_MAX:
        return None
    if kind in CLUSTER_SCOPED:
        return (kind, "", name)
    namespace = namespace if isinstance(namespace, str) else ""
    return None if len(namespace) > NAME_MAX else (kind, namespace, name)


def unusable(obj: Mapping[str, Any], kind: str) -> str:
    """Why an object of a list of `kind` cannot be stored at all (identity gave None)."""
    metadata = obj.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if isinstance(name, str) and name:
        shown = name if len(name) <= 80 else f"{name[:80]}... ({len(name)} characters)"
        return f"{kind} {shown!r}: metadata.name or metadata.namespace is longer than {NAME_MAX} characters"
    return f"a {kind} without metadata.name"


def _without_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, list):
        return [_without_nul(item) for item in value]
    if isinstance(value, dict):
        return {_without_nul(key): _without_nul(item) for key, item in value.items()}
    return value


def storable(obj: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The object as it can be stored on every database, and what had to change. PostgreSQL
    stores no NUL character in JSON or text, so they are dropped (and the object is marked)."""
    if "\\u0000" not in json.dumps(obj, default=str):
        return obj, ""
    return _without_nul(obj), "NUL characters were removed: the database cannot store them"


def content_hash(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata")
    if isinstance(metadata, Mapping) and any(key in metadata for key in VOLATILE_METADATA):
        obj = {**obj, "metadata": {k: v for k, v in metadata.items() if k not in VOLATILE_METADATA}}
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The fields that differ, one level below `spec` and `metadata` (e.g. spec.diffusionPipeline)."""
    fields = []
    for section in ("metadata", "spec"):
        before, after = old.get(section), new.get(section)
        if not isinstance(before, Mapping) or not isinstance(after, Mapping):
            if before != after:
                fields.append(section)
            continue
        for key in sorted(set(before) | set(after)):
            if key not in VOLATILE_METADATA and key != "resourceVersion" and before.get(key) != after.get(key):
                fields.append(f"{section}.{key}")
    if old.get("status") != new.get("status"):
        fields.append("status")
    return fields


# A changed field's value is kept in the change record (the matrix history shows it) up to this
# many characters of JSON; a longer one is recorded by its size only.
VALUE_LIMIT = 2000


def _kept_value(value: Any) -> Any:
    text = json.dumps(value, sort_keys=True, default=str)
    return value if len(text) <= VALUE_LIMIT else {"omitted": f"{len(text)} characters of JSON"}


def changed_values(old: Mapping[str, Any], new: Mapping[str, Any], fields: list[str]) -> dict[str, Any]:
    """The old and new value of each changed field (`changed_fields`) but status, bounded."""
    values = {}
    for name in fields:
        if name == "status":
            continue
        section, _, key = name.partition(".")
        before, after = old.get(section), new.get(section)
        if key:
            before = before.get(key) if isinstance(before, Mapping) else None
            after = after.get(key) if isinstance(after, Mapping) else None
        values[name] = {"old": _kept_value(before), "new": _kept_value(after)}
    return values


def _joined(values: list[str]) -> str:
    return ",".join(dict.fromkeys(value for value in values if value))


def _model_columns(model: Model) -> dict[str, Any]:
    uri = model.storage_uri or ""
    return {
        "model_format": model.format.name,
        "model_architecture": model.architecture or "",
        "pipeline_class": (model.pipeline.class_name or "") if model.pipeline else "",
        "has_pipeline": model.pipeline is not None,
        "storage_scheme": uri.split("://", 1)[0] + "://" if "://" in uri else "",
        "disabled": model.disabled is True,
    }


def _runtime_columns(runtime: Runtime) -> dict[str, Any]:
    entries = runtime.entries
    return {
        "model_format": _joined([e.format.name for e in entries if e.format is not None]),
        "model_architecture": _joined([e.architecture or "" for e in entries]),
        "pipeline_class": _joined([(e.pipeline.class_name or "") for e in entries if e.pipeline is not None]),
        "has_pipeline": any(e.pipeline is not None for e in entries),
        "disabled": runtime.is_disabled,
    }


def _fit_columns(values: dict[str, Any], problems: list[str]) -> None:
    for column in BOUNDED_COLUMNS:
        limit = getattr(Resource._meta.get_field(column), "max_length", None)
        if limit is not None and len(values[column]) > limit:
            problems.append(
                f"{column} ({len(values[column])} characters) is longer than {limit}: not stored in its column"
            )
            values[column] = ""
    if values["generation"] is not None and not -BIGINT_MAX <= values["generation"] <= BIGINT_MAX:
        problems.append(f"metadata.generation {values['generation']} is out of range: not stored in its column")
        values["generation"] = None


def columns(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The filter columns, the error text and the store_error of one object (a malformed one
    keeps its error; a value too long for its column is left out, and store_error says so)."""
    values = _columns(obj)
    problems: list[str] = []
    _fit_columns(values, problems)
    values["store_error"] = "; ".join(problems)
    return values


def _columns(obj: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {
        "model_format": "",
        "model_architecture": "",
        "pipeline_class": "",
        "has_pipeline": False,
        "storage_scheme": "",
        "disabled": False,
        "error": "",
    }
    metadata = obj.get("metadata")
    if not isinstance(metadata, Mapping):
        metadata = {}
    values["uid"] = str(metadata.get("uid") or "")
    values["resource_version"] = str(metadata.get("resourceVersion") or "")
    generation = metadata.get("generation")
    values["generation"] = generation if isinstance(generation, int) and not isinstance(generation, bool) else None
    try:
        parsed = matching.parse_object(obj)
    except matching.ManifestError as error:
        values["error"] = redact(f"{error.field}: {error.problem}")
        return values
    except Exception as error:  # a value the parser did not foresee must not stop the sync
        values["error"] = redact(f"cannot be evaluated ({type(error).__name__}: {error})"[:2000])
        return values
    if isinstance(parsed, Model):
        values.update(_model_columns(parsed))
    elif isinstance(parsed, Runtime):
        values.update(_runtime_columns(parsed))
    elif isinstance(parsed, InferenceService):
        values["model_format"] = ""
    return values
