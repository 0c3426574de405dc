"""Lint fixes proven out of requests. After each matrix update (lint.receivers), and when a
page finds no proofs for the inventory it shows, a task on the matrix queue proves every fix of
the cluster's lint with the what-if (lint.rules.proofs) and stores the proofs for that inventory
fingerprint (lint.models.LintProofs), with the YAML that each fix's what-if form fills in. The
lint page and API show a fix only with the proofs made for the inventory they show
(lint.selectors).

One task per cluster at a time: asking (`lint_proofs_request`) marks the cluster's row queued
unless a task is queued already; the task clears the mark before it reads the inventory, so a
change after that asks for the next one. A mark older than LINT_PROOFS_REQUEUE_AFTER seconds
(its task was lost with the broker or a worker) no longer holds a new one back.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from core.broker import BROKER_ERRORS
from core.web import editable_manifest
from inventory.models import Cluster, Resource
from inventory.parsed import Inventory, inventory_fingerprint, load_inventory
from matching import ObjectKey

from .models import LintProofs
from .rules import FindingGroup, Fix, lint_inventory
from .rules.proofs import proofs_json, proofs_key, proven_groups

logger = logging.getLogger(__name__)


# The what-if forms of a group on the lint page: (role, the fixes the form applies together).
FORMS: tuple[tuple[str, Callable[[FindingGroup], list[Fix | None] | None]], ...] = (
    ("fix", lambda group: [group.fix]),
    ("pair", lambda group: [group.fix, group.partner] if group.pair is not None else None),
    ("alternative", lambda group: [group.alternative] if group.alternative is not None else None),
)


def form_fixes(group: FindingGroup, role: str) -> list[Fix] | None:
    """The fixes of a group's form, None when it has no such form."""
    fixes = dict(FORMS)[role](group)
    if not fixes or any(fix is None for fix in fixes):
        return None
    return [fix for fix in fixes if fix is not None]


def _prove(inventory: Inventory, groups: list[FindingGroup]) -> tuple[list[FindingGroup], list[list[Any]]]:
    """The lint's groups with every fix run through the what-if (lint.rules.proofs), and the
    YAML of every object as each form's fixes change it: [group key, role, index of the fix,
    object key, YAML]. For the system: the stored objects the fixes change are read whoever
    reads the page (which offers a form only to a reader of all its objects)."""
    keys = {key for group in groups for fix in (group.fix, group.alternative) if fix is not None for key in fix.changed}
    ids: dict[int, ObjectKey] = {inventory.ids[key]: key for key in keys if key in inventory.ids}
    raw = {ids[pk]: obj for pk, obj in Resource.objects.filter(pk__in=list(ids)).values_list("pk", "obj")}
    groups = proven_groups(groups, inventory, raw)
    manifests = [
        [group.key, role, index, list(key), editable_manifest(fix.apply_to(key, raw[key]))]
        for group in groups
        for role, _fixes in FORMS
        for index, fix in enumerate(form_fixes(group, role) or [])
        for key in fix.changed
        if key in raw
    ]
    return groups, manifests


def lint_proofs_refresh(cluster: Cluster) -> LintProofs | None:
    """Prove the fixes of the cluster's current lint and store the proofs and the fix forms'
    manifests. None when those of this inventory are stored already, or when the inventory
    changed while proving (the change asks for proofs of its own)."""
    LintProofs.objects.filter(cluster=cluster).update(queued_at=None)
    inventory = load_inventory(cluster)
    started = time.process_time()
    linted = lint_inventory(inventory, cluster_name=cluster.name).groups
    key = proofs_key(inventory.fingerprint, linted)
    if LintProofs.objects.filter(cluster=cluster, fingerprint=key).exists():
        return None
    groups, manifests = _prove(inventory, linted)
    if inventory_fingerprint(cluster) != inventory.fingerprint:
        return None
    values = {
        "fingerprint": key,
        "proofs": proofs_json(groups),
        "manifests": manifests,
        "seconds": time.process_time() - started,
        "proven_at": timezone.now(),
    }
    proofs, _created = LintProofs.objects.update_or_create(cluster=cluster, defaults=values)
    logger.info("cluster %s: lint fixes proven for %s in %.1f s CPU", cluster, key, values["seconds"])
    return proofs


def lint_proofs_request(cluster_id: int) -> bool:
    """Queue the proving task of a cluster unless one is queued already; True when this call
    queued it. With the broker away it says so in the log and leaves no mark: the next view asks
    again. False for a cluster that is gone."""
    if not Cluster.objects.filter(pk=cluster_id).exists():
        return False
    LintProofs.objects.get_or_create(cluster_id=cluster_id)
    now = timezone.now()
    due = Q(queued_at__isnull=True) | Q(queued_at__lt=now - timedelta(seconds=settings.LINT_PROOFS_REQUEUE_AFTER))
    if not LintProofs.objects.filter(due, cluster_id=cluster_id).update(queued_at=now):
        return False
    from .tasks import lint_prove_task

    try:
        lint_prove_task.delay(cluster_id)
    except BROKER_ERRORS as error:
        LintProofs.objects.filter(cluster_id=cluster_id).update(queued_at=None)
        logger.warning(
            "cluster %s: lint proofs not queued (%s); the next view of its lint asks again", cluster_id, error
        )
        return False
    return True
