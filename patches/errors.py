"""Errors of the patches app, each a core.errors.DomainError with its code and HTTP status."""

from __future__ import annotations

from core.errors import DomainError


class PatchError(DomainError):
    code = "patch_error"


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
