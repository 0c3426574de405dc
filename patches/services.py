"""The one door for writes to a cluster: plan, preview and apply `spec.diffusionPipeline` patches.

`patch_apply` is the only function in the project that changes a cluster. It checks the user's
permission, accepts nothing but `spec.diffusionPipeline`, validates the patched object, sends a
JSON merge patch carrying the resourceVersion the user saw (the API server answers 409 if the
object changed since), stores the returned object through `inventory.sync.event_apply` (which
announces the change, so the matrix updates through the normal path) and records one
PatchAttempt, whatever the outcome. Kubernetes errors become outcomes, never exceptions.

Callers use this module; the work is done in `lookup` (the model and runtime a request names),
`upload` (model_index.json), `plan` (plan, checks, preview, kubectl) and `apply`.
"""

from __future__ import annotations

from .apply import ApplyOutcome, patch_apply
from .lookup import model_get, runtime_get, version_of
from .plan import PatchPreview, kubectl_command, patch_check, patch_plan, patch_preview
from .upload import MAX_UPLOAD_BYTES, pipeline_from_upload

__all__ = [
    "MAX_UPLOAD_BYTES",
    "ApplyOutcome",
    "PatchPreview",
    "kubectl_command",
    "model_get",
    "patch_apply",
    "patch_check",
    "patch_plan",
    "patch_preview",
    "pipeline_from_upload",
    "runtime_get",
    "version_of",
]
