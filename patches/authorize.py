"""Who may apply a pipeline patch to one object.

On most clusters the dashboard decides: patching a BaseModel needs the patcher role on its
namespace (or the cluster), a ClusterBaseModel the patcher role on the cluster (access.scope).
On a cluster that delegates (access.models.Delegation) the cluster decides: the user needs
only to read the object here; before sending, the dashboard asks the cluster with a
SubjectAccessReview whether the user (as the cluster knows them: access.scope.Actor) may patch
it, and sends the patch impersonating them, so the cluster's RBAC decides again and its audit
log names the person.
"""

from __future__ import annotations

from typing import Any

from access.identity import unsendable
from access.models import Delegation
from access.scope import Scope
from inventory import kube
from inventory.models import CLUSTER_SCOPED, Cluster, Resource


def delegates(cluster: Cluster) -> bool:
    """Whether the cluster's own RBAC decides its patches."""
    return cluster.is_live and Delegation.objects.filter(cluster=cluster.name).exists()


def dashboard_refusal(scope: Scope, cluster: Cluster, resource: Resource) -> str | None:
    """Why the dashboard's roles do not let the scope patch the object; None when they do."""
    if scope.may_patch(cluster.name, resource.namespace):
        return None
    where = (
        f"on cluster {cluster.name}"
        if resource.kind in CLUSTER_SCOPED
        else f"on namespace {resource.namespace} of cluster {cluster.name} (or on the cluster)"
    )
    return f"patching {resource} needs the patcher role {where}"


def cluster_refusal(api: Any, scope: Scope, resource: Resource) -> str | None:
    """Why the cluster's RBAC refuses the patch (SubjectAccessReview); None when it allows it.
    Raises KubeError when the cluster cannot answer. A name the cluster cannot be sent is refused
    before anything is sent."""
    actor = scope.actor
    problem = unsendable(actor)
    if problem is not None:
        return f"this cluster's RBAC decides patches as you, but {problem}"
    allowed, reason = kube.subject_access_review(
        api,
        user=actor.kube_user,
        groups=actor.kube_groups,
        verb="patch",
        kind=resource.kind,
        namespace=resource.namespace,
        name=resource.name,
    )
    if allowed:
        return None
    groups = ", ".join(actor.kube_groups) or "no groups"
    return f"the cluster's RBAC does not let {actor.kube_user} ({groups}) patch {resource}" + (
        f": {reason}" if reason else ""
    )
