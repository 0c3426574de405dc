"""The envelope every answer that shows a cluster's verdicts carries, and its freshness schema
component: `ome`, the OME that judged them (inventory.ome_release), and `freshness`, how current
they are (matrix.freshness, the one home of that judgement)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from inventory.models import Cluster
from inventory.ome_release import ome_description
from matrix.freshness import STATES, cluster_freshness_data


def verdicts_envelope(cluster: Cluster) -> dict[str, Any]:
    """`ome` and `freshness` of the cluster, for an answer that shows its verdicts."""
    return {"ome": ome_description(cluster), "freshness": cluster_freshness_data(cluster)}


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
