"""Reading an uploaded model_index.json into the diffusionPipeline OME would record."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import matching

from .errors import UploadInvalid

MAX_UPLOAD_BYTES = 256 * 1024
MAX_NAME_CHARS = 256
FIELD = "model_index"


def pipeline_from_upload(upload: str | bytes | Any) -> dict[str, object]:
    """The diffusionPipeline OME records from a model_index.json (text, bytes or an open file),
    at most MAX_UPLOAD_BYTES. Raises UploadInvalid saying what is wrong."""
    data = _json_object(_text(upload))
    problem = matching.model_index_problem(data)
    if problem is not None:
        raise UploadInvalid(problem, field=FIELD)
    try:
        pipeline = matching.pipeline_from_model_index(data)
    except matching.ModelIndexError as error:
        raise UploadInvalid(str(error), field=FIELD) from None
    _check_lengths(pipeline)
    return pipeline


def _check_lengths(pipeline: Mapping[str, object], path: str = "diffusionPipeline") -> None:
    """Refuse names no diffusers pipeline has: a class, library or component name longer than
    MAX_NAME_CHARS would be written to the cluster as it is."""
    for key, value in pipeline.items():
        where = f"{path}.{key}"
        if len(key) > MAX_NAME_CHARS:
            raise UploadInvalid(
                f"model_index.json: a component name of {len(key)} characters (at most {MAX_NAME_CHARS}): {key[:40]}…",
                field=FIELD,
            )
        if isinstance(value, Mapping):
            _check_lengths(value, where)
        elif isinstance(value, str) and len(value) > MAX_NAME_CHARS:
            raise UploadInvalid(
                f"model_index.json: {where} would be {len(value)} characters long (at most {MAX_NAME_CHARS}): "
                f"{value[:40]}…",
                field=FIELD,
            )


def _text(upload: str | bytes | Any) -> str:
    if hasattr(upload, "read"):
        upload = upload.read(MAX_UPLOAD_BYTES + 1)
    if isinstance(upload, str):
        if len(upload) > MAX_UPLOAD_BYTES:  # every character takes at least one byte
            raise UploadInvalid(_too_large(), field=FIELD)
        upload = upload.encode("utf-8", "surrogatepass")
    if not isinstance(upload, bytes | bytearray):
        raise UploadInvalid("model_index.json must be sent as text", field=FIELD)
    if len(upload) > MAX_UPLOAD_BYTES:
        raise UploadInvalid(_too_large(), field=FIELD)
    try:
        return bytes(upload).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UploadInvalid(
            f"model_index.json is not UTF-8 text ({error.reason} at byte {error.start})", field=FIELD
        ) from None


def _json_object(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as error:
        raise UploadInvalid(
            f"model_index.json is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}",
            field=FIELD,
        ) from None
    except (ValueError, RecursionError) as error:
        raise UploadInvalid(f"model_index.json is not valid JSON: {error}", field=FIELD) from None
    if not isinstance(data, dict):
        raise UploadInvalid(f"model_index.json must hold a JSON object, not {type(data).__name__}", field=FIELD)
    return data


def _too_large() -> str:
    return f"model_index.json is larger than {MAX_UPLOAD_BYTES // 1024} KiB"


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not allowed")
