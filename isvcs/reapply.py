"""InferenceServices waiting for a re-apply after a model change, and the one-line command that
makes OME decide again.

OME does not watch models: "after you fix a model, change the InferenceService's spec, labels or
annotations" (ome-docs `guides/deploy-models/troubleshoot-runtime-selection.md`, Step 5; spec
10.7). Since v1.3 a runtime change wakes the services itself (same page), so only a model change
leaves a service behind. A service waits for a re-apply when OME would deploy it today, on another
runtime than at its last decision or after a decision that deployed nothing (the first verdict
recorded since its spec, labels or annotations last changed, `InferenceServiceVerdict.first_*`),
and one of its models changed after that decision (`Resource.changed_at`). A named runtime that
becomes compatible (advisory to named) runs the same runtime either way: nothing to re-apply.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from datetime import datetime
from typing import Protocol

from access.scope import Scope
from inventory.models import MODEL_KINDS, Cluster
from inventory.selectors import resources_visible
from matching import BLOCKED, SILENT, WAITING, IsvcOutcome, ObjectKey

UNDEPLOYED = (BLOCKED, SILENT, WAITING)
"""Last decisions that deployed nothing: OME deploying the service now differs from them."""

RECONCILE_ANNOTATION = "compat.ome.io/reconcile-requested-at"
"""The annotation the re-apply command sets: any change of the annotations makes OME decide again."""


def reapply_command(namespace: str, name: str) -> str:
    """One line that changes the service's annotations (a fresh timestamp each run), so that OME
    reconciles it again; the service's spec is left as it is."""
    target = f"inferenceservice/{name}"
    return (
        f"kubectl annotate {shlex.quote(target)} -n {shlex.quote(namespace)} --overwrite "
        f'{RECONCILE_ANNOTATION}="$(date -u +%Y-%m-%dT%H:%M:%SZ)"'
    )


class Decision(Protocol):
    """OME's last decision of a service, as recorded (isvcs.services.FirstVerdict)."""

    @property
    def verdict(self) -> str: ...
    @property
    def runtime(self) -> ObjectKey | None: ...
    @property
    def at(self) -> str:
        """When, ISO 8601."""
        ...


def reapply_for(
    key: ObjectKey, now: IsvcOutcome, decided: Decision | None, models_changed: Mapping[ObjectKey, datetime]
) -> str | None:
    """The re-apply command of the service `key` when it waits for one (see above), else None.
    `decided`: OME's last decision, None when not recorded."""
    if decided is None or not now.ok or (decided.runtime == now.runtime and decided.verdict not in UNDEPLOYED):
        return None
    models = [model for model in (now.model, now.webhook_model) if model is not None]
    changed = [models_changed[model] for model in models if model in models_changed]
    if not changed or max(changed) <= datetime.fromisoformat(decided.at):
        return None
    return reapply_command(key[1], key[2])


def models_changed(cluster: Cluster, scope: Scope) -> dict[ObjectKey, datetime]:
    """When each model of the cluster the scope reads last changed."""
    rows = resources_visible(scope).filter(cluster=cluster, kind__in=MODEL_KINDS)
    found = rows.values_list("kind", "namespace", "name", "changed_at")
    return {(kind, namespace, name): changed for kind, namespace, name, changed in found}
