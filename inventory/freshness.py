"""A cluster's freshness for the answers of the apps below `matrix` in the import layers (lint,
isvcs), the envelope every answer that shows verdicts carries, and its one schema component.

matrix.freshness is the one home of the judgement; it needs the matrix's builds, so lint and
isvcs cannot import it. They ask `freshness_data` instead, which matrix plugs in when Django
starts (matrix.apps), so their answers say what every other surface says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from rest_framework import serializers

from .models import Cluster
from .ome_release import ome_description

LIVE, LAGGING, STALE, UNKNOWN = "live", "lagging", "stale", "unknown"
STATES = (LIVE, LAGGING, STALE, UNKNOWN)

FreshnessJudge = Callable[[Cluster], dict[str, Any]]
_judge: list[FreshnessJudge] = []


def freshness_judge_plug(judge: FreshnessJudge) -> None:
    """Make `judge` (matrix.freshness) the one that answers `freshness_data`."""
    _judge[:] = [judge]


def freshness_data(cluster: Cluster) -> dict[str, Any]:
    """The cluster's freshness as the API answers it (FreshnessSerializer)."""
    if not _judge:
        raise ImproperlyConfigured("nothing judges freshness: the matrix app plugs it in when it is ready")
    return _judge[0](cluster)


def verdicts_envelope(cluster: Cluster) -> dict[str, Any]:
    """What every answer that shows a cluster's verdicts carries: `ome`, the OME that judged
    them (inventory.ome_release), and `freshness`, how current they are."""
    return {"ome": ome_description(cluster), "freshness": freshness_data(cluster)}


class FreshnessSerializer(serializers.Serializer):
    """How current the cluster's data is (matrix.freshness), next to `ome` in every answer that
    shows verdicts."""

    state = serializers.ChoiceField(choices=STATES)
    since = serializers.DateTimeField(
        allow_null=True, help_text="When it became stale, or started to lag; null when live or unknown."
    )
    reasons = serializers.ListField(
        child=serializers.CharField(), help_text="Why it is stale or unknown, one line each, naming the kinds."
    )
    versions_behind = serializers.IntegerField(help_text="Inventory changes the matrix does not hold yet.")
