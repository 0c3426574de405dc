"""Each matrix update asks for the proofs of the cluster's lint fixes at the new inventory
(lint.proving)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.dispatch import receiver

from matrix.signals import matrix_updated

from .proving import lint_proofs_request


@receiver(matrix_updated)
def prove_lint(sender: object, cluster_id: int, **kwargs: Any) -> None:
    """Queue the proving of the lint fixes (one task per cluster at a time) once the update
    commits, behind it on the matrix queue: the lint page shows fixes only once proven."""
    if settings.LINT_PROVE_ON_UPDATE:
        transaction.on_commit(lambda: lint_proofs_request(cluster_id))
