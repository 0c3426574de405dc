"""Errors of the patches app. Each carries a machine-readable `code`, the HTTP status to answer
with (`http_status`) and the request field it is about, which the API's exception handler turns
into `{"detail", "code", "field"}`."""

from __future__ import annotations


class PatchError(Exception):
    code = "patch_error"
    http_status = 400

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class PatchInvalid(PatchError):
    """The request cannot be turned into an allowed, valid patch (400)."""

    code = "invalid_patch"


class UploadInvalid(PatchInvalid):
    """An uploaded model_index.json is too large, not JSON, or holds no pipeline (400)."""

    code = "invalid_model_index"


class PatchTargetMissing(PatchError):
    """The cluster, model or runtime named in the request does not exist (404)."""

    code = "not_found"
    http_status = 404


class AppendOnlyError(Exception):
    """The audit log is append-only: a PatchAttempt is never changed or deleted."""
