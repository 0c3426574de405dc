"""The world of the authorization matrix: two clusters with two tenants each, the roles that
read them, and, independent of access.scope, which (cluster, namespace) each role may read.

Every name carries its tenant's marker: cluster `qxa` holds namespaces `qxa-one` and `qxa-two`
(objects `qxa-one-model`, ...) and cluster-scoped objects `qxa-shared-...`; cluster `qxb` the
same with `qxb`. A response that shows a marker its reader may not read has leaked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from django.apps import apps
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from access.models import Role
from inventory.models import Cluster, Resource
from inventory.services import ClusterSpec, cluster_register, manifests_load
from isvcs.services import isvc_verdicts_refresh
from lint.models import LintAcknowledgement
from lint.proving import lint_proofs_refresh
from matrix.audit import matrix_audit
from matrix.models import CellChange
from matrix.services import matrix_rebuild
from patches.models import PatchAttempt
from policies.evaluation import policies_evaluate
from policies.models import Delivery, Receiver
from policies.services import policies_load_files
from tests.inventory.live.objects import isvc, model, runtime

CLUSTERS = ("qxa", "qxb")
NAMESPACES = {cluster: (f"{cluster}-one", f"{cluster}-two") for cluster in CLUSTERS}
# The role users' own cluster and namespace.
HOME, HOME_NS = "qxa", "qxa-one"


def cluster_objects(cluster: str) -> list[dict[str, Any]]:
    found = [model(f"{cluster}-shared-model"), runtime(f"{cluster}-shared-runtime")]
    for namespace in NAMESPACES[cluster]:
        found += [
            model(f"{namespace}-model", namespace),
            runtime(f"{namespace}-runtime", namespace, architecture="MistralForCausalLM"),
            isvc(f"{namespace}-isvc", namespace, model_name=f"{cluster}-shared-model"),
        ]
    return found


def _history(cluster: Cluster) -> None:
    for namespace in NAMESPACES[cluster.name]:
        CellChange.objects.create(
            cluster=cluster,
            model_kind="BaseModel",
            model_namespace=namespace,
            model_name=f"{namespace}-model",
            runtime_kind="ServingRuntime",
            runtime_namespace=namespace,
            runtime_name=f"{namespace}-runtime",
            namespace=namespace,
            old_status="excluded",
            new_status="selected",
            cause=[{"kind": "BaseModel", "namespace": namespace, "name": f"{namespace}-model", "action": "modified"}],
        )


def _records(cluster: Cluster, author_of: Callable[[str], AbstractBaseUser]) -> None:
    """An applied patch and a lint acknowledgement per namespace, by `author_of(namespace)`."""
    for namespace in NAMESPACES[cluster.name]:
        author = author_of(namespace)
        PatchAttempt.objects.create(
            user=author,
            username=author.get_username(),
            cluster_name=cluster.name,
            model_kind="BaseModel",
            model_namespace=namespace,
            model_name=f"{namespace}-model",
            result=PatchAttempt.Result.APPLIED,
            target=PatchAttempt.Target.INVENTORY,
        )
        LintAcknowledgement.objects.create(
            cluster=cluster,
            key=f"no-model:ServingRuntime/{namespace}/{namespace}-runtime",
            signature="s",
            title=f"ServingRuntime {namespace}/{namespace}-runtime serves no model",
            reason="known",
            user=author,
            username=author.get_username(),
        )


def policies(cluster: str) -> list[dict[str, Any]]:
    """A policy per namespace (its runtime does not serve its model: failing, naming both), and
    one of the whole fleet: a pin (baselines) and a count over every namespace, failing at
    cluster scope with every namespace's models in its message."""
    found: list[dict[str, Any]] = [
        {
            "apiVersion": "compat.ome.io/v1alpha1",
            "kind": "RuntimePolicy",
            "metadata": {"name": f"{namespace}-policy"},
            "spec": {
                "owner": f"{namespace} owners",
                "description": f"{namespace}-model runs on {namespace}-runtime",
                "scope": {"clusters": [cluster], "namespaces": [namespace]},
                "assertions": [
                    {
                        "name": "served",
                        "assert": "servedBy",
                        "runtime": f"{namespace}-runtime",
                        "scope": {"names": [f"{namespace}-model"]},
                    },
                ],
            },
        }
        for namespace in NAMESPACES[cluster]
    ]
    if cluster == CLUSTERS[0]:
        found.append(
            {
                "apiVersion": "compat.ome.io/v1alpha1",
                "kind": "RuntimePolicy",
                "metadata": {"name": "fleet-wide"},
                "spec": {
                    "assertions": [
                        {"name": "pins", "assert": "pickUnchanged"},
                        {"name": "counted", "assert": "pickCount", "runtime": f"{cluster}-shared-runtime", "atMost": 0},
                    ]
                },
            }
        )
    return found


def _receivers(cluster: Cluster) -> None:
    """A receiver of each namespace, and one of the whole cluster, each with a delivery."""
    for namespace in ("", *NAMESPACES[cluster.name]):
        name = f"{namespace or cluster.name}-hook"
        hook = Receiver.objects.create(name=name, url="https://hooks.invalid/", cluster=cluster, namespaces=namespace)
        Delivery.objects.create(
            receiver=hook, event_id=name, event="assertion.failing", cluster_name=cluster.name,
            payload={"namespace": namespace}, next_attempt_at=timezone.now(),
        )  # fmt: skip


def build_world(folder: Path, author_of: Callable[[str], AbstractBaseUser]) -> list[Cluster]:
    """Both clusters stored, built, audited and with history, their policies evaluated, lint
    fixes proven, receivers with deliveries; `author_of(namespace)` patched each namespace's
    model and acknowledged its lint."""
    clusters = []
    for name in CLUSTERS:
        (folder / name).mkdir()
        (folder / name / "objects.yaml").write_text(yaml.safe_dump_all(cluster_objects(name)))
        (folder / f"{name}-policies.yaml").write_text(yaml.safe_dump_all(policies(name)))
        cluster = cluster_register(ClusterSpec(name, Cluster.Source.MANIFESTS, manifests=(str(folder / name),)))
        manifests_load(cluster, cluster.manifests, prune=True)
        matrix_rebuild(cluster)
        isvc_verdicts_refresh(cluster)
        matrix_audit(cluster, sample=2)
        _history(cluster)
        _records(cluster, author_of)
        _receivers(cluster)
        lint_proofs_refresh(cluster)
        clusters.append(cluster)
    policies_load_files(sorted(folder.glob("*-policies.yaml")))
    for cluster in clusters:
        policies_evaluate(cluster)
    return clusters


@dataclass(frozen=True)
class RoleSpec:
    """A reader: its grant (None: no grant; cluster only: the whole cluster), whether signed
    in, whether a superuser."""

    name: str
    role: int | None = None
    namespace: str = ""
    signed_in: bool = True
    superuser: bool = False

    def reads(self, cluster: str, namespace: str) -> bool:
        """The documented rule: a role on a cluster reads all of it; a role on a namespace reads
        that namespace and the cluster's cluster-scoped objects ("")."""
        if self.superuser:
            return True
        if self.role is None or cluster != HOME:
            return False
        return not self.namespace or namespace in (self.namespace, "")

    def forbidden(self) -> list[str]:
        """The markers this reader must never see."""
        found = [name for name in CLUSTERS if not self.reads(name, "")]
        return found + [
            namespace
            for cluster in CLUSTERS
            if self.reads(cluster, "")
            for namespace in NAMESPACES[cluster]
            if not self.reads(cluster, namespace)
        ]


ROLES = (
    RoleSpec("anonymous", signed_in=False),
    RoleSpec("no-role"),
    RoleSpec("viewer-of-namespace", Role.VIEWER, HOME_NS),
    RoleSpec("viewer-of-cluster", Role.VIEWER),
    RoleSpec("patcher-of-namespace", Role.PATCHER, HOME_NS),
    RoleSpec("admin-of-cluster", Role.ADMIN),
    RoleSpec("superuser", superuser=True),
)


def resource_id(cluster: str, name: str) -> int:
    return Resource.objects.get(cluster__name=cluster, name=name).pk


# Tables of a tenant's data without a TENANCY of their own (a policy is the fleet's; a token its
# owner's), which the world must hold too.
ALSO_HELD = ("policies.Policy", "access.ApiToken")


def rows_per_tenant_model() -> dict[str, int]:
    """Rows of every model with a TENANCY, and of ALSO_HELD, by `app.Model`."""
    models = [model for model in apps.get_models() if hasattr(model, "TENANCY")]
    models += [apps.get_model(label) for label in ALSO_HELD]
    return {model._meta.label: model._default_manager.count() for model in models}
