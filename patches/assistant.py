"""The MCP endpoint's applying tool (`apply_pipeline_patch`, docs/mcp.md): the one-click pipeline
patch the UI offers for a model and a runtime ("Make this model match": the patch page of a
model with `?runtime=`), planned by patch_preview and applied by patch_apply, as that page
does. The rights, the audit row, the checks (only spec.diffusionPipeline, the patched model
valid, the version precondition) and the write to the cluster are patch_apply's; nothing here
repeats them."""

from __future__ import annotations

from typing import Any

from access.models import Delegation, Role
from access.scope import Scope
from inventory.selectors import cluster_choose, clusters_visible

from .apply import ApplyOutcome, User, patch_apply
from .authorize import delegates
from .errors import PatchInvalid
from .plan import patch_preview


def may_patch_somewhere(scope: Scope) -> bool:
    """Whether the scope may apply some patch, so that the applying tool is offered: the patcher
    role on some cluster or namespace, or reading a cluster whose own RBAC decides patches
    (patches.authorize: patch_apply asks that cluster for each patch)."""
    every, whole, partial = scope.held(Role.PATCHER)
    if every or whole or partial:
        return True
    return any(map(delegates, clusters_visible(scope).filter(name__in=Delegation.objects.values("cluster"))))


def planned_patch_apply(cluster_name: str, model: Any, runtime: Any, *, user: User, scope: Scope) -> ApplyOutcome:
    """Applies the patch that makes `model` pass `runtime` on the cluster named `cluster_name`
    (each as the patches API names them), as `user`, and returns patch_apply's outcome. Raises
    ClusterNotFound, PatchTargetMissing or PatchInvalid before anything is attempted: a cluster,
    model or runtime the scope does not read is missing, as one that does not exist; and when no
    patch is needed or none can help, PatchInvalid says why (the patch page's notes)."""
    cluster = cluster_choose(cluster_name, default="none", scope=scope)
    preview = patch_preview(cluster, model=model, runtime=runtime, scope=scope)
    if preview.patch is None:
        raise PatchInvalid(" ".join(preview.notes), field="runtime")
    return patch_apply(
        cluster,
        model=preview.model,
        patch=preview.patch,
        resource_version=preview.resource_version,
        user=user,
        runtime=preview.runtime,
    )
