"""Each matrix update records the cluster's InferenceService verdicts (isvcs.services) inline,
in the worker that made the update: the verdicts are current as soon as the update returns."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from inventory.models import Cluster
from matrix.signals import matrix_updated

from .services import isvc_verdicts_refresh


@receiver(matrix_updated)
def refresh_verdicts(sender: object, cluster: Cluster, **kwargs: Any) -> None:
    isvc_verdicts_refresh(cluster)
