"""Acknowledging a lint finding group (hides it, recording who and why) and withdrawing it."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from access.scope import Scope
from core.errors import DomainError
from inventory.models import Cluster

from .models import LintAcknowledgement
from .rules import FindingGroup
from .selectors import lint_acknowledgement_list, lint_report_get

REASON_LIMIT = 2000


class AcknowledgeError(DomainError):
    code = "invalid"


class AcknowledgementMissing(AcknowledgeError):
    code = "not_found"
    http_status = 404


def _group(cluster: Cluster, key: str, scope: Scope) -> FindingGroup:
    for group in lint_report_get(cluster, scope=scope).groups:
        if group.key == key:
            return group
    raise AcknowledgementMissing(f"cluster {cluster.name!r} has no lint finding group {key!r} now", field="key")


def lint_acknowledge(cluster: Cluster, key: str, reason: str, user: Any, *, scope: Scope) -> LintAcknowledgement:
    """Hide a group of the cluster's current lint that `scope` reads, with the user's reason.
    The caller checks the permission (lint.models.ACKNOWLEDGE_PERMISSION)."""
    reason = (reason or "").strip()
    if not reason:
        raise AcknowledgeError("say why the finding can be hidden (reason)", field="reason")
    if len(reason) > REASON_LIMIT:
        raise AcknowledgeError(f"the reason is {len(reason)} characters; at most {REASON_LIMIT}", field="reason")
    group = _group(cluster, key, scope)
    try:
        with transaction.atomic():
            LintAcknowledgement.objects.filter(cluster=cluster, key=key, withdrawn_at__isnull=True).update(
                withdrawn_at=timezone.now(), withdrawn_by=user.get_username()
            )
            return LintAcknowledgement.objects.create(
                cluster=cluster,
                key=key,
                signature=group.signature,
                title=group.title,
                reason=reason,
                user=user,
                username=user.get_username(),
            )
    except IntegrityError:
        raise AcknowledgeError(f"{key!r} was acknowledged at the same moment by someone else", field="key") from None


def lint_withdraw(cluster: Cluster, key: str, user: Any, *, scope: Scope) -> int:
    """Show a group again: its active acknowledgement, if `scope` reads it, is marked withdrawn
    (kept on record)."""
    active = lint_acknowledgement_list(cluster, scope=scope).filter(key=key, withdrawn_at__isnull=True)
    withdrawn = active.update(withdrawn_at=timezone.now(), withdrawn_by=user.get_username())
    if not withdrawn:
        raise AcknowledgementMissing(f"{key!r} is not acknowledged in cluster {cluster.name!r}", field="key")
    return withdrawn
